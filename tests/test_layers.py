"""The engine's shape holds: each package of core shows one public face, and other packages go
through it (the layers themselves are import-linter's contract in pyproject.toml, run by
`make check`)."""

from __future__ import annotations

import ast
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


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Imports in `path` (a file of the checkout at `root`) of a module behind another core package's face."""
    core = root / "core"
    rel = path.relative_to(root).parts
    own = rel[1] if rel[0] == "core" and len(rel) > 2 else None
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("parley.core."):
            continue
        parts = node.module.split(".")[2:]
        if parts[0] == own or not (core / parts[0]).is_dir():
            continue  # inside its own package, or a floor module (errors, settings)
        if not (core.joinpath(*parts) / "__init__.py").is_file():
            found.append(f"{path.relative_to(root)}:{node.lineno}: from {node.module} import ...")
    return found


def test_other_packages_import_from_the_face_not_from_the_modules_behind_it():
    sources = [p for top in ("core", "tui", "bench") for p in sorted((ROOT / top).rglob("*.py"))]
    found = [line for path in sources for line in private_imports(path)]
    assert not found, "import these from the package's face (add the name to its __init__.py):\n" + "\n".join(found)


def test_the_scan_finds_an_import_behind_a_face_even_inside_a_function(tmp_path: Path):
    (tmp_path / "core" / "store").mkdir(parents=True)
    (tmp_path / "core" / "store" / "__init__.py").write_text('"""The store."""\n')
    engine = tmp_path / "core" / "engine"
    engine.mkdir()
    (engine / "x.py").write_text("from parley.core.store import Store\n\n\ndef f():\n    from parley.core.store.store import Store\n")
    assert private_imports(engine / "x.py", tmp_path) == ["core/engine/x.py:5: from parley.core.store.store import ..."]


def test_every_package_of_core_sits_on_a_layer():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index('type = "layers"')
    block = text[start : text.index("]", text.index("layers = [", start))]
    layered = {name.strip() for line in block.splitlines() if line.strip().startswith('"') for name in line.split('"')[1].split("|")}
    modules = {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"}
    assert set(PACKAGES) | modules == layered
