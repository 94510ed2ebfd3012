"""The documentation says what the code does: the generated references hold every command,
option and route; troubleshooting names every error a user can meet; the architecture page's
paths exist; the README stays short; and a site that would load anything from outside itself
fails its build."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import click
import pytest
from ruamel.yaml import YAML

from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def hook(name: str):
    """A module of docs/hooks, loaded as mkdocs loads it (by its path)."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", DOCS / "hooks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def commands(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Command, click.Context]]:
    found = [(ctx.command_path, command, ctx)]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            found += commands(sub, click.Context(sub, info_name=name, parent=ctx))
    return found


def test_the_cli_reference_holds_every_command_and_every_option_with_its_help():
    reference = hook("references").cli_reference()
    everything = commands(cli, click.Context(cli, info_name="parley"))
    assert len(everything) > 20
    for path, command, ctx in everything:
        assert f"`{path}`" in reference, path
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            names, help_text = record
            assert names.replace("|", "&#124;").replace("<", "&lt;") in reference, f"{path} {names}"
            first_words = " ".join(help_text.split()[:3]).replace("_", "\\_").replace("*", "\\*")
            assert first_words.split(" ")[0] in reference, f"{path} {names}: its help"


def test_the_rest_reference_holds_every_route_and_schema_of_the_openapi_document():
    references = hook("references")
    document = references.openapi_document()
    reference = references.rest_reference()
    routes = [(method.upper(), path) for path, operations in document["paths"].items() for method in operations]
    assert ("POST", "/api/batches") in routes and len(routes) >= 9
    for method, path in routes:
        assert f"## `{method} {path}`" in reference
    for name in document["components"]["schemas"]:
        assert f"### {name}\n" in reference


def test_the_site_check_finds_what_a_page_would_load_from_elsewhere(tmp_path: Path):
    external_loads = hook("offline").external_loads
    (tmp_path / "index.html").write_text(
        '<a href="https://example.org/">a link is fine</a><script src="https://cdn.example/x.js"></script>'
        '<link rel="stylesheet" href="//fonts.example/css"><img src="images/app.png">',
        encoding="utf-8",
    )
    (tmp_path / "app.css").write_text("@font-face { src: url('https://fonts.example/f.woff2') }", encoding="utf-8")
    assert external_loads(tmp_path) == [
        "app.css: https://fonts.example/f.woff2",
        "index.html: https://cdn.example/x.js",
        "index.html: //fonts.example/css",
    ]


def error_classes() -> dict[str, str]:
    """Every exception class of parley's that derives from ParleyError, by name, with its module,
    plus the mock order API's refusal of a database (it imports nothing of parley)."""
    bases, found = {"ParleyError"}, {"DatabaseRefused": "mockapi/order_store.py"}
    trees = {
        path: ast.parse(path.read_text(encoding="utf-8")) for folder in ("core", "tui", "mockapi") for path in (ROOT / folder).rglob("*.py")
    }
    grew = True
    while grew:
        grew = False
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in bases:
                    named = {getattr(base, "id", getattr(base, "attr", None)) for base in node.bases}
                    if named & bases:
                        bases.add(node.name)
                        found[node.name] = path.relative_to(ROOT).as_posix()
                        grew = True
    return found


def test_troubleshooting_names_every_error_a_user_can_meet():
    page = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    classes = error_classes()
    assert {"ProfileError", "ConfigError", "ProviderError", "ForeignDatabase", "PythonBotError"} <= set(classes)
    missing = {name: where for name, where in classes.items() if f"`{name}`" not in page}
    assert not missing, f"errors troubleshooting does not name: {missing}"
    outcomes = re.findall(r"^\| `(\w+)` \|", (DOCS / "outcomes.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert "bot_error" in outcomes and all(f"`{o}`" in page for o in outcomes if o != "passed" and o != "failed")


def test_the_architecture_pages_paths_exist():
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:core|tui|mockapi|docs)/[\w/.]*)`", page))
    assert len(paths) > 30
    missing = sorted(p for p in paths if "NAME" not in p and not (ROOT / p).exists())
    assert not missing, missing


def test_every_page_is_in_the_sites_navigation_and_the_readme_stays_short():
    config = YAML(typ="safe").load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, dict):
            return [p for value in nav.values() for p in pages(value)]
        if isinstance(nav, list):
            return [p for item in nav for p in pages(item)]
        return []

    listed = set(pages(config["nav"]))
    written = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert listed == written
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


@pytest.mark.parametrize("image", ["batches", "chat", "profiles", "sessions", "html-report"])
def test_the_pictures_the_pages_show_are_committed_pngs(image: str):
    data = (DOCS / "images" / f"{image}.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
