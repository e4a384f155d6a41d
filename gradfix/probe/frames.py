"""Which stack frame is the user's: findings point into the script, not into torch, the stdlib or gradfix."""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache

_GRADFIX_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../gradfix
_REPO_DIRS = tuple(os.path.join(os.path.dirname(_GRADFIX_ROOT), d) + os.sep for d in ("cli", "codemods"))


def _library_roots() -> tuple[str, ...]:
    roots = {_GRADFIX_ROOT + os.sep, *_REPO_DIRS}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p) + os.sep)
            roots.add(os.path.abspath(p) + os.sep)
    try:
        import torch

        roots.add(os.path.dirname(os.path.realpath(torch.__file__)) + os.sep)
    except ImportError:  # pragma: no cover - the probe always has torch
        pass
    return tuple(sorted(roots))


_ROOTS: tuple[str, ...] | None = None


@lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    global _ROOTS
    if not filename or filename.startswith("<"):
        return False
    if _ROOTS is None:
        _ROOTS = _library_roots()
    path = os.path.abspath(filename)
    return not any(path.startswith(r) for r in _ROOTS) and "site-packages" not in path


def user_location(skip: int = 1) -> tuple[str, int] | None:
    """(path, line) of the innermost frame in user code above the caller, or None."""
    f = sys._getframe(skip)
    while f is not None:
        if is_user_file(f.f_code.co_filename):
            return f.f_code.co_filename, f.f_lineno
        f = f.f_back
    return None


def display_path(path: str) -> str:
    """A path relative to the working directory when it is under it (as Ruff prints them)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
