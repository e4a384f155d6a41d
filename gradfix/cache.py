"""The results cache: a file's findings, keyed by everything they depend on.

A re-run over unchanged code should cost a hash per file, the way Ruff's cache does. A file's
findings depend on its text, on gradfix's code, on the rules and options in force, and on the
project facts it reads from other files (analysis/project.py: module classes it imports,
calls of its functions elsewhere). The key covers all four, so a changed imported module
invalidates the files that import it and no other.

Stored under the project root in `.gradfix_cache/` (with a `.gitignore` of `*`, as Ruff does),
one small JSON file per entry, written atomically: a run killed half-way leaves whole entries
or none, and two runs sharing the folder never read a half-written one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache

from gradfix import __version__
from gradfix.model import FileError, Finding

CACHE_DIR = ".gradfix_cache"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """gradfix's version and its own source files (name, size, mtime): a development checkout
    that changes a rule without a new version number must not read stale results."""
    from importlib.util import find_spec

    h = hashlib.sha256(__version__.encode())
    package = os.path.dirname(os.path.abspath(__file__))
    # codemods/ and cli/ sit beside the package in a checkout (installed as gradfix.codemods and
    # gradfix.cli): take their folders from the import system, without importing them (the
    # rules load libcst, which a warm run does without)
    roots = [package]
    for name in ("gradfix.codemods", "gradfix.cli"):
        spec = find_spec(name)
        roots += list(spec.submodule_search_locations or ()) if spec is not None else []
    seen = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                full = os.path.realpath(os.path.join(dirpath, name))
                if full in seen:
                    continue
                seen.add(full)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                h.update(f"{full}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def digest(*parts: str) -> str:
    """sha256 of the parts (each ended by a NUL): cache keys and content hashes."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def cache_folder(project_root: str | None) -> str:
    """Where the cache lives: $GRADFIX_CACHE_DIR, else the project root, else the working directory."""
    return os.environ.get("GRADFIX_CACHE_DIR") or project_root or os.getcwd()


class Cache:
    """Findings and errors per key; `get` misses on anything unreadable rather than fail."""

    def __init__(self, root: str):
        self.folder = os.path.join(os.path.abspath(root), CACHE_DIR, code_fingerprint())
        self.hits = 0
        self.misses = 0

    def key(self, path: str, text: str, rules: str, facts: str, text_digest: str | None = None) -> str:
        """The key of one file's results; `text_digest` is digest(text) when the caller has it (the
        project index hashed every text already: a warm run hashes each once)."""
        return digest(path, rules, facts, text_digest or digest(text))

    def _file(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key[2:] + ".json")

    def get(self, key: str) -> tuple[list[Finding], list[FileError]] | None:
        data = self.get_record(key)
        try:
            if data is None:
                raise KeyError(key)
            result = ([Finding.from_record(f) for f in data["findings"]],
                      [FileError.from_record(e) for e in data["errors"]])
        except (ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, key: str, findings: list[Finding], errors: list[FileError]) -> None:
        self.put_record(key, {"findings": [f.to_record() for f in findings], "errors": [e.to_record() for e in errors]})

    def get_record(self, key: str) -> dict | None:
        """A stored JSON object (None: absent or unreadable). Other entry kinds than results
        (gradfix/projectcache.py: file summaries, a run's project facts) share the folder under
        keys of their own prefix."""
        try:
            with open(self._file(key), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put_record(self, key: str, record: dict) -> None:
        target = self._file(key)
        data = json.dumps(record)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            self._mark_ignored()
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(target))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except OSError:
            pass  # a read-only checkout still gets its results, just not cached

    def _mark_ignored(self) -> None:
        top = os.path.dirname(self.folder)
        marker = os.path.join(top, ".gitignore")
        if not os.path.exists(marker):
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write("# Automatically created by gradfix.\n*\n")
            with open(os.path.join(top, "CACHEDIR.TAG"), "w", encoding="utf-8") as fh:
                fh.write("Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by gradfix.\n")
