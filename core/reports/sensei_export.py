"""A batch's conversations as Sensei saves them (`parley report BATCH --format sensei --output DIR`),
so Sensei's own tools read them and Sensei rule files run on them (`parley rules check`, or
Sensei's `sensei-check`).

One file per conversation, three YAML documents each (parley.core.rules.parley_conversation
says what goes where: the extracted outputs as `data_output`, the spec's variables in
`ask_about`), at `TEST_NAME/SPEC_ID_tTRIAL.yml` under DIR, names made safe for any file system
(letters, digits, `.`, `_`, `-`). The folder is written beside DIR and renamed into place once
complete: DIR holds every file or none. DIR must not exist yet, or be empty: files of another
batch left in it would be checked as this one's.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

from parley.core.errors import ParleyError
from parley.core.rules import dump_sensei, sensei_documents
from parley.core.store import Store, outcome_rows

MAX_NAME = 80
"""Characters kept of a test name or spec id in a file name."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, fallback: str = "conversation") -> str:
    """`text` as one path component: runs of other characters as `_`, no leading dot, at most
    MAX_NAME characters, never Sensei's `__report__` marker (its reader skips such files)."""
    name = _UNSAFE.sub("_", text).lstrip(".")[:MAX_NAME].replace("__report__", "_report_")
    return name or fallback


def export_sensei(store: Store, batch_id: str, directory: Path) -> tuple[Path, int]:
    """Write every conversation of the batch into `directory` (see the module); returns the
    folder and how many files were written. ParleyError when `directory` is a file or holds
    files already, or cannot be written."""
    batch = store.get_batch(batch_id)
    target = directory.expanduser()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "a file" if not target.is_dir() else "a folder that is not empty"
        raise ParleyError(f"--output {directory} is {what}: give a new (or empty) folder for the Sensei files")
    numbers: dict[str, set[str]] = defaultdict(set)
    for row in outcome_rows(store, batch.id):
        numbers[row.name].add(row.spec_id)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    except OSError as exc:
        raise ParleyError(f"cannot write into {target.parent}: {exc.strerror or exc}") from None
    written = 0
    used: set[str] = set()
    try:
        for stored in store.iter_conversations(batch.id):
            spec = stored.spec
            documents = sensei_documents(
                spec, stored.conversation, stored.verdict, serial=batch.id, number=max(1, len(numbers.get(spec.name, ())))
            )
            relative = _unused(f"{safe_name(spec.name)}/{safe_name(spec.spec_id)}_t{stored.trial}", used)
            path = partial / f"{relative}.yml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dump_sensei(documents), encoding="utf-8")
            written += 1
        if target.exists():
            target.rmdir()  # empty, as checked: the complete folder takes its place
        partial.rename(target)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise ParleyError(f"cannot write the Sensei files into {target}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return target, written


def _unused(relative: str, used: set[str]) -> str:
    """`relative`, or with `_2`, `_3`... when two conversations' names came out the same (their
    characters made safe), compared as a case-insensitive file system would."""
    candidate, n = relative, 1
    while candidate.lower() in used:
        n += 1
        candidate = f"{relative}_{n}"
    used.add(candidate.lower())
    return candidate
