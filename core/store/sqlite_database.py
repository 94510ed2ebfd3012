"""sqlite-utils' `Database`, the store's one import of sqlite-utils, made without numpy.

sqlite-utils imports numpy whenever it is installed, only to map numpy's scalar types to column
types on insert. parley never inserts a numpy value, and numpy (installed beside parley for the
charts) would cost every command that opens a database a tenth of a second at start-up
(`parley compare` of two 1,000-conversation batches spends more on it than on the comparison).
So numpy is hidden while sqlite-utils loads, and imports as usual for whatever needs it later.
"""

from __future__ import annotations

import sys

__all__ = ["Database"]

_hidden = "numpy" not in sys.modules
if _hidden:
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` raises ImportError meanwhile
try:
    from sqlite_utils import Database
finally:
    if _hidden:
        del sys.modules["numpy"]
