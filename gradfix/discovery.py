"""Which files a run looks at: Python files and notebooks under the given paths.

Skips VCS folders, virtual environments, build output and configured excludes,
and never follows a symlink that leads outside the tree being walked.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Iterable, Iterator

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "node_modules",
        "site-packages", ".eggs",
    }
)


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def is_excluded(path: str, patterns: Iterable[str], root: str) -> bool:
    """Whether `path` matches a configured exclude pattern (relative to the project root)."""
    rel = _rel(path, root)
    if rel.startswith(".."):
        return False
    return _excluded(rel, os.path.basename(path), patterns)


def _excluded(rel: str, name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern) or rel.startswith(pattern + "/"):
            return True
    return False


DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")


def discover(paths: Iterable[str], exclude: Iterable[str] = (), root: str | None = None,
             include: Iterable[str] = DEFAULT_INCLUDE) -> Iterator[str]:
    """Yield the files a folder walk includes (`include`: file-name or relative-path patterns)
    in a stable order. Explicitly named files are always yielded."""
    exclude = list(exclude)
    include = list(include)
    root = os.path.abspath(root or os.getcwd())
    seen: set[str] = set()
    for given in paths:
        if os.path.isfile(given):
            real = os.path.realpath(given)
            if real not in seen:
                seen.add(real)
                yield given
            continue
        if not os.path.isdir(given):
            # reported by the caller as an error
            yield given
            continue
        top_real = os.path.realpath(given)
        for dirpath, dirnames, filenames in os.walk(given, followlinks=False):
            keep = []
            for d in sorted(dirnames):
                full = os.path.join(dirpath, d)
                rel = _rel(full, root)
                if d in SKIP_DIRS or d.endswith(".egg-info") or _is_virtualenv(full):
                    continue
                if os.path.islink(full):
                    continue  # os.walk would not descend anyway; be explicit
                if _excluded(rel, d, exclude):
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                if not _included(_rel(full, root), f, include):
                    continue
                if os.path.islink(full):
                    real = os.path.realpath(full)
                    if not (real == top_real or real.startswith(top_real + os.sep)):
                        continue  # a link out of the tree
                rel = _rel(full, root)
                if _excluded(rel, f, exclude):
                    continue
                real = os.path.realpath(full)
                if real in seen:
                    continue
                seen.add(real)
                yield full


def _included(rel: str, name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def _rel(path: str, root: str) -> str:
    try:
        return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    except ValueError:
        return path
