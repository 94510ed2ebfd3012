"""Code of the user's that parley imports and calls: a `python:MODULE:NAME` bot, a check written
in Python (`expect.python`). What both need, said once:

- `split_target` and `import_target`: `MODULE:NAME` imported from the working folder first (as
  `python -m` would), every failure one ConfigError naming the target (the module's own
  exception's traceback goes to parley.log);
- `user_frame`: where in the user's own code an exception was raised (`my_checks.py:12, in polite`);
- `in_daemon_thread`: a sync call on a daemon thread of its own, awaited, so it never stalls the
  event loop and one that never returns never keeps parley from exiting.

Importing and calling a module is code execution: the REST service runs neither unless its
operator allows it (parley.core.service.bot_hosts).
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from parley.core.errors import ConfigError

__all__ = ["import_target", "in_daemon_thread", "split_target", "user_frame"]

log = logging.getLogger("parley.python_code")

_PARLEY = os.path.dirname(os.path.abspath(__file__))  # parley's engine
_LIBRARIES = tuple({os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)})


def split_target(name: str, *, form: str) -> tuple[str, str]:
    """(module, attribute path) of `MODULE:NAME` (a `python:` prefix optional); ConfigError naming
    `form` (how such a target is written) when it is not one. Nothing is imported."""
    target = name.removeprefix("python:").strip()
    module, sep, attribute = target.partition(":")
    module, attribute = module.strip(), attribute.strip()
    if not sep or not module or not attribute:
        raise ConfigError(f"{name!r}: {form}")
    if not all(part.isidentifier() for part in module.split(".")):
        raise ConfigError(f"{name!r}: {module!r} is not a module name (dotted Python identifiers, as in `import {module}`)")
    return module, attribute


def _type_and_message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def import_target(name: str, *, form: str, what: str, exception_text: Callable[[BaseException], str] = _type_and_message) -> object:
    """The object `MODULE:NAME` names, its module imported now; ConfigError, one line, saying why
    it cannot be (`what` says what it was for in the log: "the bot", "the check"; `exception_text`
    how the module's own exception is said in that line)."""
    module_name, attribute = split_target(name, form=form)
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)  # `python:mybot:reply` finds ./mybot.py, as `python -m` would
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        where = "" if missing == module_name else f" (it needs {missing}, which is not installed)"
        raise ConfigError(f"{name}: cannot import the module {module_name}{where}: looked in {here} and on sys.path") from None
    except Exception as exc:  # the module's own code failed: it is the user's code, said in one line
        log.error("importing %s for %s %s failed", module_name, what, name, exc_info=exc)
        raise ConfigError(f"{name}: importing {module_name} raised {exception_text(exc)} (the traceback is in parley.log)") from None
    value: object = module
    for part in attribute.split("."):
        if part == "<locals>":
            raise ConfigError(f"{name}: {attribute} is defined inside a function and cannot be imported by name")
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ConfigError(f"{name}: the module {module_name} has no {attribute!r}") from None
    return value


def user_frame(exc: BaseException, *, within: str | None = None) -> str | None:
    """Where in the user's own code `exc` was raised: the innermost frame of its traceback in the
    file `within` (a check's own module, wherever it lies), else the innermost that is neither
    parley's nor an installed library's nor Python's (`my_bot.py:12, in answer`, relative to the
    working folder when it is under it); None when there is none."""
    own = os.path.abspath(within) if within else None
    found = preferred = None
    tb = exc.__traceback__
    while tb is not None:
        path = os.path.abspath(tb.tb_frame.f_code.co_filename)
        frame = (path, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        if own is not None and path == own:
            preferred = frame
        if not path.startswith((_PARLEY + os.sep, *(p + os.sep for p in _LIBRARIES))) and not path.startswith("<"):
            found = frame
        tb = tb.tb_next
    chosen = preferred or found
    if chosen is None:
        return None
    path, line, function = chosen
    shown = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    return f"{shown}:{line}, in {function}"


async def in_daemon_thread(fn: Callable[[], Any], *, thread_name: str) -> Any:
    """`fn()` in a daemon thread of its own, awaited: the loop goes on meanwhile, and a call that
    never returns keeps nobody waiting at exit (asyncio.to_thread's pool threads are joined at
    exit). The caller's context variables go with it, as with asyncio.to_thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # it timed out or was cancelled meanwhile
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            result = context.run(fn)
        except BaseException as exc:  # noqa: BLE001 - everything the user's code raises goes back to the loop
            outcome: tuple[bool, Any] = (False, exc)
        else:
            outcome = (True, result)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this call any more
            log.warning("%s finished after its conversation's loop had closed", thread_name)

    threading.Thread(target=work, name=thread_name, daemon=True).start()
    return await future
