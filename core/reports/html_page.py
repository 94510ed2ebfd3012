"""What every HTML report of parley is made of: the page (one self-contained file: its style
inline, its charts inline SVG, no script, no font, no link that loads anything), text escaped,
and numbers marked with the field of the JSON report they show.

The page forbids itself to load anything (a Content-Security-Policy of `default-src 'none'`, only
its own inline style allowed): even a bot reply that slipped past escaping could run no script
and fetch nothing. It reads with scripts disabled: filtering and folding are plain HTML
(`<details>`, links to `:target`).

A number shown is a `<span data-field="PATH" data-value="JSON" data-format="FORMAT">`: PATH is
where the JSON report (`parley report --format json`, `parley compare --format json`) holds the
same value (`summary.passed`, `summary.pass_k.1.value`), JSON the value itself, FORMAT how it is
written (int, pct, num, seconds, usd). A test reads every one of them against the JSON report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from html import escape
from typing import Literal

from parley.core.evaluation import Interval
from parley.core.reports.cell_escaping import without_nul
from parley.core.reports.charts import OUTCOME_COLOURS

NumberFormat = Literal["int", "pct", "num", "num1", "seconds", "usd"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def esc(text: object) -> str:
    """Text from a bot, a user, a file or a batch, as HTML text or an attribute value: shown as
    written (`<script>` is text), never markup."""
    return escape(without_nul(str(text)), quote=True)


def shown(value: float | int | None, fmt: NumberFormat) -> str:
    """How a number is written in the page ("n/a" when there is none)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a" if fmt != "usd" else "unknown"
    if fmt == "int":
        return f"{int(value):,}"
    if fmt == "pct":
        return f"{value * 100:.1f}%"
    if fmt == "num":
        return f"{value:.2f}"
    if fmt == "num1":
        return f"{value:.1f}"
    if fmt == "seconds":
        if value >= 0.1 or value == 0:
            return f"{value:.2f} s"
        return f"{value * 1000:.1f} ms" if value >= 0.001 else f"{value * 1000:.2f} ms"
    return f"${value:.4f}"


def num(field: str, value: float | int | None, fmt: NumberFormat = "int") -> str:
    """A number as shown, marked with where the JSON report holds it (see the module doc)."""
    return f'<span class="n" data-field="{esc(field)}" data-value="{esc(json.dumps(value))}" data-format="{fmt}">{shown(value, fmt)}</span>'


def interval(field: str, value: Interval | None) -> str:
    """A 95% interval as "(63.3%–91.8%)" (its two ends marked), or nothing."""
    if value is None:
        return ""
    return f'<span class="iv">({num(field + ".low", value.low, "pct")}–{num(field + ".high", value.high, "pct")})</span>'


def badge(outcome: str) -> str:
    return f'<span class="badge o-{esc(outcome)}">{esc(outcome)}</span>'


def table(header: Iterable[str], rows: Iterable[Iterable[str]], *, cls: str = "") -> str:
    """A table of cells already made HTML (escape text with `esc`), in a box that scrolls sideways
    on a narrow screen."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll{" " + cls if cls else ""}"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def stats_line(items: Iterable[tuple[str, str]]) -> str:
    """Figures in a line that wraps: `label value · label value`, values already HTML."""
    return '<p class="stats">' + "".join(f"<span>{esc(label)} <b>{value}</b></span>" for label, value in items) + "</p>"


def section(anchor: str, title: str, *parts: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{"".join(parts)}</section>'


def page_start(title: str, header: str, *, extra_style: str = "") -> str:
    """The document up to its body's first part (`header`, already HTML)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light">'
        f'<meta name="generator" content="parley"><title>{esc(title)}</title>'
        f"<style>{STYLE}{_outcome_style()}{extra_style}</style></head>\n"
        f"<body>{header}"
    )


def page_end() -> str:
    return "</main></body></html>\n"


def _outcome_style() -> str:
    return "".join(f".o-{name}{{--o:{colour}}}" for name, colour in OUTCOME_COLOURS.items())


STYLE = """
:root{--ink:#1c2833;--dim:#5d6d7e;--line:#d5d8dc;--bg:#f7f9fa;--card:#fff;--bad:#c0392b;--good:#1e8449;--o:#5d6d7e}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
header.top{background:#1c2833;color:#fff;padding:1rem 1.25rem}
header.top h1{margin:0;font-size:1.35rem;font-weight:600}
header.top p{margin:.25rem 0 0;color:#d5d8dc;font-size:.9rem;overflow-wrap:anywhere}
header.top code{color:#fff}
nav.toc{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid var(--line);padding:.45rem 1.25rem;font-size:.88rem;white-space:nowrap;overflow-x:auto}
nav.toc a{margin-right:1rem;color:var(--ink)}
main{max-width:1180px;margin:0 auto;padding:0 1.25rem 3rem}
section{margin-top:1.6rem}
h2{font-size:1.15rem;margin:0 0 .6rem;padding-bottom:.25rem;border-bottom:2px solid var(--line)}
h3{font-size:1rem;margin:1rem 0 .4rem}
p{margin:.4rem 0}
.dim,.iv{color:var(--dim)}
.iv{white-space:nowrap}
.note{color:var(--dim);font-size:.88rem;max-width:60rem}
code{font:.86em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
a{color:#1a5276}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:.75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.7rem .9rem}
.card .label{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--dim)}
.card .big{font-size:1.7rem;font-weight:650;line-height:1.2}
.card .small{font-size:.85rem;color:var(--dim)}
.scroll{overflow-x:auto;max-width:100%;background:var(--card);border:1px solid var(--line);border-radius:6px}
.scroll.tall{max-height:30rem;overflow-y:auto}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{padding:.32rem .6rem;border-bottom:1px solid #eaeded;text-align:left;vertical-align:top}
th{background:#f2f4f4;font-weight:600;position:sticky;top:0;z-index:1;white-space:nowrap}
td .n,td.r{white-space:nowrap}
td code{overflow-wrap:break-word}
tbody tr:last-child td{border-bottom:0}
.badge{display:inline-block;padding:0 .45em;border-radius:4px;font-size:.8rem;font-weight:600;color:#fff;background:var(--o);white-space:nowrap}
.grid2,.grid3{display:grid;gap:1rem;align-items:start;margin-top:1rem}
.grid2{grid-template-columns:repeat(auto-fit,minmax(24rem,1fr))}
.grid3{grid-template-columns:repeat(auto-fit,minmax(18rem,1fr))}
.grid2>*,.grid3>*,.cards>*{min-width:0}
p.stats{display:flex;flex-wrap:wrap;gap:.1rem .9rem;margin:.4rem 0 0;font-size:.86rem;color:var(--dim)}
p.stats b{color:var(--ink);font-weight:600}
figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}
figure svg{max-width:100%;height:auto;display:block}
figcaption{font-weight:600;font-size:.92rem;margin-bottom:.3rem}
figure table{margin-top:.4rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.6rem 0;font-size:.9rem}
dl.meta dt{color:var(--dim)}
dl.meta dd{margin:0;overflow-wrap:anywhere}
.rate{display:inline-block;position:relative;width:7rem;height:.8rem;background:#eaeded;border-radius:3px;vertical-align:middle;margin-right:.4rem}
.rate i{position:absolute;left:0;top:0;bottom:0;background:var(--good);border-radius:3px}
.rate b{position:absolute;top:-.15rem;bottom:-.15rem;border-left:1.5px solid var(--ink);border-right:1.5px solid var(--ink)}
nav.filter{display:flex;flex-wrap:wrap;gap:.4rem;margin:.4rem 0 .8rem}
nav.filter a{text-decoration:none;border:1px solid var(--line);border-radius:999px;padding:.15rem .7rem;background:#fff;color:var(--ink);font-size:.88rem}
nav.filter a .badge{margin-right:.3rem}
.only{scroll-margin-top:3rem}
[id]{scroll-margin-top:2.8rem}
.group{margin-bottom:1.2rem}
details.conv{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--o);border-radius:6px;margin:.35rem 0}
details.conv>summary{cursor:pointer;padding:.4rem .7rem;display:flex;flex-wrap:wrap;gap:.2rem .6rem;align-items:baseline}
details.conv>summary .spec{font-weight:600;overflow-wrap:anywhere}
details.conv>summary .why{color:var(--bad);flex-basis:100%;font-size:.86rem;overflow-wrap:anywhere}
details.conv>div{padding:.2rem .9rem .8rem;border-top:1px solid #eaeded}
ul.checks{list-style:none;padding:0;margin:.3rem 0}
ul.checks li{padding:.25rem .5rem;border-radius:4px;margin:.15rem 0;overflow-wrap:anywhere}
ul.checks li.fail{background:#fdedec;border-left:4px solid var(--bad);font-weight:500}
ul.checks li.error{background:#fef5e7;border-left:4px solid #b7950b}
ul.checks .mark{display:inline-block;min-width:4.8rem;font-weight:600}
ul.checks .reason{display:block;color:var(--dim);font-weight:400;font-size:.86rem;white-space:pre-wrap}
ol.transcript{list-style:none;padding:0;margin:.3rem 0}
ol.transcript li{margin:.3rem 0;padding:.35rem .6rem;border-radius:6px;max-width:52rem}
ol.transcript .who{display:block;font-size:.75rem;font-weight:600;color:var(--dim);text-transform:uppercase;letter-spacing:.03em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
li.m-user{background:#eaf2f8}
li.m-assistant{background:#f4f6f6;border:1px solid #e5e8e8}
li.m-tool{background:#fbfcfc;border:1px dashed var(--line);font-size:.85rem}
.blamed{outline:2px solid var(--bad);outline-offset:1px}
.call{font:.82rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin-top:.2rem;overflow-wrap:anywhere;white-space:pre-wrap}
.refused{color:var(--bad);font-weight:600}
@media (max-width:640px){
 body{font-size:14px}
 main{padding:0 .7rem 2rem}
 header.top{padding:.8rem .8rem}
 nav.toc{position:static;white-space:normal;padding:.4rem .8rem;line-height:1.9}
 .rate{display:none}
 td code{overflow-wrap:anywhere}
 #specs td:first-child{min-width:9.5rem}
 .card .big{font-size:1.3rem}
 .grid2,.grid3{grid-template-columns:1fr}
 .cards{grid-template-columns:1fr 1fr;gap:.5rem}
 .card{padding:.5rem .6rem}
 dl.meta{grid-template-columns:1fr}
 dl.meta dt{margin-top:.3rem}
}
@media print{nav.toc{position:static}.scroll.tall{max-height:none}}
"""
