"""A warm `check` that loads no rule: the engine's identity remembered from the run that built it.

Loading the rules (and libcst, which they build on) is most of what a fully warm run costs: 0.5 s
of CPU against Ruff's 0.4 s for a whole cold run of accelerate + pytorch-lightning. What the run
needs of them before it knows whether any file must be analysed is small: the rule ids (to check
the configuration's selectors) and the engine's fingerprint (the rules in force and their
options: a part of every results key). Both are a function of gradfix's code, the project's
`pyproject.toml` and the command's --select/--ignore, and the run that last built an Engine from
those inputs stored them in the results cache, whose folder is keyed by the code already. A run
with the same inputs reads them back: its configuration was validated by that run, and it builds
the real Engine (importing the rules) only when a file misses the cache.
"""

from __future__ import annotations

import json
import os

from gradfix.cache import Cache, cache_folder, digest
from gradfix.config import Config, find_pyproject


def cache_root(start: str, pyproject: str | None = ...) -> str:  # type: ignore[assignment]
    """The folder `check` keeps its cache under (cli/main.py's `_cache`: $GRADFIX_CACHE_DIR, else the
    project root `load_config` finds, else the working directory), found without the rules.
    `pyproject`: find_pyproject(start), when the caller has it."""
    if pyproject is ...:
        pyproject = find_pyproject(start)
    return cache_folder(os.path.dirname(pyproject) if pyproject else None)


def engine_key(start: str, select: tuple[str, ...], ignore: tuple[str, ...],
               pyproject: str | None = ...) -> str:  # type: ignore[assignment]
    """What the configuration and the rules in force are made from, besides gradfix's code."""
    if pyproject is ...:
        pyproject = find_pyproject(start)
    content = b""
    if pyproject is not None:
        try:
            with open(pyproject, "rb") as fh:
                content = fh.read()
        except OSError:
            content = b"<unreadable>"
    return digest("engine", pyproject or "", content.decode("latin-1"), json.dumps([list(select), list(ignore)]))


class WarmEngine:
    """Stands in for the Engine an earlier run with the same inputs built: its fingerprint and
    configuration, and the project index the runner gives it (`materialise` builds the Engine)."""

    def __init__(self, config: Config, fingerprint: str):
        self.config = config
        self.fingerprint = fingerprint
        self.project = None

    def materialise(self):
        from gradfix.codemods import ALL_RULES
        from gradfix.engine import Engine

        engine = Engine(ALL_RULES, self.config)
        engine.project = self.project
        return engine


def recall(cache: Cache, key: str) -> tuple[set[str], str] | None:
    """(rule ids, engine fingerprint) stored for `key`, or None."""
    data = cache.get_record(key)
    if data is None:
        return None
    known, fingerprint = data.get("known"), data.get("fingerprint")
    if not isinstance(known, list) or not isinstance(fingerprint, str):
        return None
    return {str(k) for k in known}, fingerprint


def remember(cache: Cache, key: str, known, engine) -> None:
    cache.put_record(key, {"known": sorted(known), "fingerprint": engine.fingerprint})
