"""The engine's shape holds: each package of core shows one public face, and other packages go
through it (the layers themselves are import-linter's contract in pyproject.toml, run by
`make check`)."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

from parley.core.lazy_exports import exported_names

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
FACES = sorted(CORE.rglob("__init__.py"))
PACKAGES = sorted({p.parent.relative_to(CORE).parts[0] for p in FACES if p.parent != CORE})


def dotted(init: Path) -> str:
    return ".".join(("parley", "core", *init.parent.relative_to(CORE).parts)).rstrip(".")


@functools.cache  # the scan below asks each face once per import of it
def declared_all(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


@pytest.mark.parametrize("init", [p for p in FACES if p.parent != CORE], ids=lambda p: dotted(p))
def test_each_package_names_its_public_face(init: Path):
    package = importlib.import_module(dotted(init))
    assert package.__doc__ and package.__doc__.strip(), f"{dotted(init)} says nothing about what it is for"
    offered = exported_names(init)
    listed = declared_all(init)
    if listed is None:
        assert not offered, f"{dotted(init)} imports names for its face but has no __all__"
        return
    assert sorted(listed) == sorted(offered), f"{dotted(init)}: __all__ and the face's imports differ"
    for name, (module, attribute) in offered.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), attribute), f"{dotted(init)}.{name}"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def _face(root: Path, dotted_module: str) -> Path | None:
    """The face (`__init__.py`) a `parley.core...` or `parley.api` module name is, if it is one."""
    parts = dotted_module.split(".")
    if parts[:2] == ["parley", "api"]:
        parts = ["parley", "core", "api", *parts[2:]]
    if parts[:2] != ["parley", "core"] or len(parts) < 3:
        return None
    init = root.joinpath("core", *parts[2:], "__init__.py")
    return init if init.is_file() else None


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Imports in `path` (a file of the checkout at `root`) that go past another core package's
    face: a module behind it (`from parley.core.store.store import Store`, `import
    parley.core.store.store`), or a name the face does not offer in its `__all__` (a module
    behind it reached through it, `from parley.core.reports import exports`, or a name it never
    exported)."""
    core = root / "core"
    rel = path.relative_to(root).parts
    own = rel[1] if rel[0] == "core" and len(rel) > 2 else None
    found = []

    def behind(module: str) -> bool:
        parts = module.split(".")[2:]
        if not parts or parts[0] == own or not (core / parts[0]).is_dir():
            return False  # inside its own package, or a floor module (errors, settings)
        return not (core.joinpath(*parts) / "__init__.py").is_file()

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if a.name.startswith("parley.core.") and behind(a.name)]
        if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith(("parley.core.", "parley.api")):
            continue
        if node.module.startswith("parley.core.") and behind(node.module):
            found.append(f"{where}: from {node.module} import ...")
            continue
        face = _face(root, node.module)
        if face is None or (own is not None and face.relative_to(core).parts[0] == own):
            continue
        offered = set(declared_all(face) or [])
        found += [f"{where}: from {node.module} import {a.name} (not in its __all__)" for a in node.names if a.name not in offered]
    return found


def test_other_packages_import_from_the_face_not_from_the_modules_behind_it():
    sources = [p for top in ("core", "tui", "bench") for p in sorted((ROOT / top).rglob("*.py"))]
    found = [line for path in sources for line in private_imports(path)]
    assert not found, "import these from the package's face (add the name to its __init__.py):\n" + "\n".join(found)


def test_the_scan_finds_an_import_behind_a_face_even_inside_a_function(tmp_path: Path):
    (tmp_path / "core" / "store").mkdir(parents=True)
    (tmp_path / "core" / "store" / "__init__.py").write_text('"""The store."""\n\n__all__ = ["Store"]\n')
    engine = tmp_path / "core" / "engine"
    engine.mkdir()
    (engine / "x.py").write_text("from parley.core.store import Store\n\n\ndef f():\n    from parley.core.store.store import Store\n")
    assert private_imports(engine / "x.py", tmp_path) == ["core/engine/x.py:5: from parley.core.store.store import ..."]


def test_the_scan_finds_a_module_imported_whole_a_module_reached_through_a_face_and_a_name_it_does_not_offer(tmp_path: Path):
    (tmp_path / "core" / "reports").mkdir(parents=True)
    (tmp_path / "core" / "reports" / "__init__.py").write_text('"""Reports."""\n\n__all__ = ["write_json"]\n')
    (tmp_path / "core" / "reports" / "exports.py").write_text("def write_json(): ...\n")
    cli = tmp_path / "tui" / "cli"
    cli.mkdir(parents=True)
    (cli / "x.py").write_text(
        "import parley.core.reports.exports\n"
        "from parley.core.reports import exports\n"
        "from parley.core.reports import BatchSummary, write_json\n"
        "import parley.core.reports\n"
    )
    assert private_imports(cli / "x.py", tmp_path) == [
        "tui/cli/x.py:1: import parley.core.reports.exports",
        "tui/cli/x.py:2: from parley.core.reports import exports (not in its __all__)",
        "tui/cli/x.py:3: from parley.core.reports import BatchSummary (not in its __all__)",
    ]


def test_every_package_of_core_sits_on_a_layer():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index('type = "layers"')
    block = text[start : text.index("]", text.index("layers = [", start))]
    layered = {name.strip() for line in block.splitlines() if line.strip().startswith('"') for name in line.split('"')[1].split("|")}
    modules = {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"}
    assert set(PACKAGES) | modules == layered
