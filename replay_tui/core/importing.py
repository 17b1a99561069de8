"""A user's object by ``module:attr``, as uvicorn finds ``module:app``.

Both ``--reducer package.module:NAME`` and ``--graph module:attr`` name code
of the user's to import: one way to import it and one wording of what went
wrong, each a single line (:class:`CannotRun`) the caller puts its flag before.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from replay_tui.core.errors import CannotRun


def import_attr(modname: str, attr: str) -> tuple[ModuleType, Any]:
    """Import ``modname`` and read ``attr`` (dotted: ``graphs.main``) of it.
    A module that does not import (``SystemExit`` at import included) or an
    attribute it lacks: :class:`CannotRun`, one line."""
    try:
        module = importlib.import_module(modname)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit at import is a module that does not import too
        said = " ".join(str(exc).split())
        raise CannotRun(f"cannot import {modname}: {type(exc).__name__}: {said}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CannotRun(f"module {modname} has no {attr}")
        obj = getattr(obj, part)
    return module, obj
