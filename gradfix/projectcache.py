"""The project index of a cached run, built without parsing what the cache already knows.

A warm `check` used to spend 85 % of its time re-summarising every file (analysis/project.py:
an `ast.parse` and a walk per file) to compute the project facts each cached result is keyed
by. Two entries in the results cache (gradfix/cache.py) remove that:

- a file's summary, keyed by its text and the package its relative imports start from (what
  `summarise` reads besides the text; its path and dotted names are recomputed, cheaply);
- a run's facts: the per-file fingerprints (`ProjectIndex.fingerprint`) of one exact set of
  files, keyed by the project root, each file's shown and absolute path, its package and a hash
  of its text. Those determine every summary, hence every fingerprint: a run over the same
  files with the same contents reads them back and needs no summary at all.

So a fully warm run hashes each file and parses none; a run where one file changed parses that
one and reads the others' summaries. The index itself is filled on first use (a rule's question,
a fingerprint the run's entry lacks), so a run whose results all hit never builds it.
"""

from __future__ import annotations

import os

from gradfix.analysis.project import ProjectIndex
from gradfix.analysis.summary import CallSite, FileSummary, module_names, package_of, summarise
from gradfix.analysis.returns import Returned
from gradfix.cache import Cache, digest


class CachedProjectIndex(ProjectIndex):
    """A ProjectIndex over `files` (shown path -> text) whose summaries and fingerprints come
    from `cache` where it has them. `parsed` counts the files summarised from their text."""

    def __init__(self, files: dict[str, str], root: str, cache: Cache):
        self._unloaded: dict[str, str] | None = dict(files)
        super().__init__(root)
        self._cache = cache
        self._packages: dict[str, str | None] = {}
        self.parsed = 0
        self._hashes = {shown: digest(text) for shown, text in files.items()}
        parts = [self.root]
        for shown in sorted(files):
            full = os.path.abspath(shown)
            parts += [shown, full, self._package(full) or "", self._hashes[shown]]
        self._run_key = digest("project facts", *parts)
        stored = cache.get_record(self._run_key)
        facts = stored.get("facts") if stored is not None else None
        self._known: dict[str, str] = facts if isinstance(facts, dict) else {}
        self._fresh: dict[str, str] = {}

    # ProjectIndex reads and resets `_files`: the summaries are loaded at the first read
    @property
    def _files(self) -> dict[str, FileSummary]:
        if self._unloaded is not None:
            files, self._unloaded = self._unloaded, None
            self._load(files)
        return self.__dict__["_summaries"]

    @_files.setter
    def _files(self, value: dict[str, FileSummary]) -> None:
        self.__dict__["_summaries"] = value

    def load(self) -> None:
        """Fill the index now (before worker processes fork, so that they do not each load it)."""
        self._files  # noqa: B018 - the property loads

    def _package(self, full: str) -> str | None:
        folder = os.path.dirname(full)
        if folder not in self._packages:
            self._packages[folder] = package_of(full)
        return self._packages[folder]

    def _load(self, files: dict[str, str]) -> None:
        summaries = self.__dict__["_summaries"]
        for shown, text in files.items():
            full = os.path.abspath(shown)
            package = self._package(full)
            key = digest("file summary", self._hashes[shown], package or "")
            summary = _from_record(self._cache.get_record(key), full, self.root)
            if summary is None:
                self.parsed += 1
                summary = summarise(full, text, self.root)
                self._cache.put_record(key, _to_record(summary))
            if summary is not False and summary is not None:
                summaries[full] = summary

    def text_digest(self, path: str) -> str | None:
        """digest() of the file's text, as this index hashed it (None: not one of its files)."""
        return self._hashes.get(path)

    def fingerprint(self, path: str) -> str:
        hit = self._known.get(path)
        if hit is not None:
            return hit
        value = self._fresh[path] = super().fingerprint(path)
        return value

    def save(self) -> None:
        """Store the fingerprints computed in this run with those read (once, at the run's end)."""
        if self._fresh:
            self._cache.put_record(self._run_key, {"facts": {**self._known, **self._fresh}})
            self._known.update(self._fresh)
            self._fresh = {}


def _to_record(s: FileSummary | None) -> dict:
    if s is None:
        return {"none": True}      # does not parse: the engine reports it; not parsed again here
    return {"imports": s.imports, "classes": {k: list(v) for k, v in s.classes.items()},
            "functions": sorted(s.functions), "stateless": sorted(s.stateless),
            "sites": [[c.target, c.no_grad, c.caller, c.line, [list(kv) for kv in c.classes]] for c in s.sites],
            "factories": {k: [[r.ctor, r.head] for r in v] for k, v in s.factories.items()},
            "heads": dict(s.heads), "clears": sorted(s.clears), "stars": list(s.stars),
            "clearing": sorted(s.clearing), "numbers": {k: list(v) for k, v in s.numbers.items()},
            "number_functions": sorted(s.number_functions)}


def _from_record(data: dict | None, full: str, root: str) -> FileSummary | bool | None:
    """The summary stored (False: the file does not parse; None: no usable entry)."""
    if data is None:
        return None
    if data.get("none") is True:
        return False
    try:
        return FileSummary(
            full, module_names(full, root), dict(data["imports"]),
            {k: tuple(v) for k, v in data["classes"].items()}, frozenset(data["functions"]),
            frozenset(data["stateless"]), tuple(CallSite(t, bool(g), c, int(n), tuple((str(k), str(v)) for k, v in a))
                                              for t, g, c, n, a in data["sites"]),
            {k: tuple(Returned(str(c), h) for c, h in v) for k, v in data["factories"].items()},
            {str(k): str(v) for k, v in data["heads"].items()},
            frozenset(str(c) for c in data["clears"]), tuple(str(m) for m in data["stars"]),
            frozenset(str(c) for c in data["clearing"]),
            {str(k): tuple(int(i) for i in v) for k, v in data["numbers"].items()},
            frozenset(str(f) for f in data["number_functions"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
