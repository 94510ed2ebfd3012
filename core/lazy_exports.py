"""A package's public face, each name imported on first use.

Every subpackage of core shows one public face in its `__init__.py`: the names it offers the
rest of parley, written once as imports from its own modules under `if TYPE_CHECKING:` (so
type checkers and readers see exactly what each name is) and listed in `__all__`. Other packages
import from the face (`from parley.core.store import Store`), never from a module behind it.

`lazy_exports` reads those imports from the `__init__.py` itself and imports a name's module
only when the name is first asked for: `from parley.core.models import parse_model_name` costs
what importing `names.py` costs, not the OpenAI SDK its sibling `openai_provider.py` needs, so
start-up stays as fast as importing the modules directly.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["exported_names", "lazy_exports"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def exported_names(init_path: str | Path) -> dict[str, tuple[str, str]]:
    """The names a face's `if TYPE_CHECKING:` imports offer: public name -> (module, its name there)."""
    tree = ast.parse(Path(init_path).read_text(encoding="utf-8"), filename=str(init_path))
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                for alias in statement.names:
                    names[alias.asname or alias.name] = (statement.module, alias.name)
    return names


def lazy_exports(package: str, init_path: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose `__init__.py` is `init_path`."""
    names = exported_names(init_path)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value  # later look-ups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
