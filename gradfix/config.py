"""`[tool.gradfix]` in the nearest pyproject.toml, merged with command-line flags.

```toml
[tool.gradfix]
select = ["GF1", "GF201"]      # rule ids or prefixes; default: all
ignore = ["GF104"]
exclude = ["legacy/", "*_pb2.py"]
per-file-ignores = {"tests/*" = ["GF101"]}   # glob (relative to the project root) -> selectors
extend-include = ["*.pyw"]     # file patterns a folder walk takes besides the defaults
# include = ["*.py"]           # or replace the defaults (*.py, *.pyi, *.ipynb)

python = ".venv/bin/python"    # the interpreter the verifier runs checks in (default: see README)
root = ["src", "libs"]         # extra import roots for the project's own modules
memory-limit = 4096            # MB a verification check may allocate
cpu-limit = 30                 # CPU seconds per check (default: the per-check timeout)

[tool.gradfix.rules.GF201]
threshold = 1000.0             # smallest literal divisor that counts as a loss scale
```
Paths are relative to the pyproject.toml's folder.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

from gradfix.discovery import DEFAULT_INCLUDE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    pass


@dataclass
class Config:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    include: list[str] | None = None          # None: DEFAULT_INCLUDE
    extend_include: list[str] = field(default_factory=list)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    path: str | None = None           # the pyproject.toml it came from
    root: str | None = None           # its directory (project root)
    python: str | None = None         # verifier interpreter, absolute
    import_roots: list[str] = field(default_factory=list)  # verifier import roots, absolute
    memory_limit_mb: int | None = None
    cpu_limit_s: float | None = None

    def enabled(self, rule_id: str) -> bool:
        if self.select is not None and not any(selects(s, rule_id) for s in self.select):
            return False
        return not any(selects(i, rule_id) for i in self.ignore)

    def ignored_in(self, path: str) -> list[str]:
        """Selectors that `per-file-ignores` turns off for `path` (Ruff's matching: the glob
        against the path relative to the project root, or against the file name)."""
        if not self.per_file_ignores:
            return []
        root = self.root or os.getcwd()
        try:
            rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
        except ValueError:
            rel = path
        name = os.path.basename(path)
        out: list[str] = []
        for pattern, codes in self.per_file_ignores.items():
            pat = pattern.rstrip("/")
            if fnmatch.fnmatchcase(rel, pat) or fnmatch.fnmatchcase(name, pat) or rel.startswith(pat + "/"):
                out.extend(codes)
        return out

    def options_for(self, rule_id: str) -> dict[str, Any]:
        return self.rule_options.get(rule_id, {})

    def include_patterns(self) -> list[str]:
        """File-name patterns a folder walk takes (Ruff's include / extend-include)."""
        base = list(DEFAULT_INCLUDE) if self.include is None else list(self.include)
        return base + [p for p in self.extend_include if p not in base]



def find_pyproject(start: str) -> str | None:
    cur = os.path.abspath(start)
    if os.path.isfile(cur):
        cur = os.path.dirname(cur)
    while True:
        candidate = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _str_list(value: Any, key: str, path: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.gradfix] {key} must be a list of strings")
    return list(value)


def load_config(start: str, known_rules: Iterable[str] = (), pyproject: str | None = ...) -> Config:  # type: ignore[assignment]
    """The configuration for `start`; `pyproject` is find_pyproject(start) when the caller has it."""
    path = find_pyproject(start) if pyproject is ... else pyproject
    if path is None:
        return Config()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    section = data.get("tool", {}).get("gradfix")
    config = Config(path=path, root=os.path.dirname(path))
    if section is None:
        return config
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.gradfix] must be a table")
    known = set(known_rules)
    allowed = {"select", "ignore", "exclude", "include", "extend-include", "rules", "verify", "per-file-ignores",
               "python", "root", "memory-limit", "cpu-limit"}
    for key in section:
        if key not in allowed:
            raise ConfigError(f"{path}: unknown key [tool.gradfix] {key!r} (expected one of {sorted(allowed)})")
    if "select" in section:
        config.select = _str_list(section["select"], "select", path)
    if "ignore" in section:
        config.ignore = _str_list(section["ignore"], "ignore", path)
    if "exclude" in section:
        config.exclude = _str_list(section["exclude"], "exclude", path)
    if "include" in section:
        config.include = _str_list(section["include"], "include", path)
    if "extend-include" in section:
        config.extend_include = _str_list(section["extend-include"], "extend-include", path)
    for key in ("select", "ignore"):
        for code in getattr(config, key) or []:
            check_selector(code, known, f"{path}: [tool.gradfix] {key}")
    pfi = section.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: [tool.gradfix] per-file-ignores must be a table of glob = [rule selectors]")
    for pattern, codes in pfi.items():
        codes = _str_list(codes, f"per-file-ignores {pattern!r}", path)
        for code in codes:
            check_selector(code, known, f"{path}: [tool.gradfix] per-file-ignores {pattern!r}")
        config.per_file_ignores[pattern] = codes
    _verifier_keys(config, section, path)
    rules = section.get("rules", {})
    if not isinstance(rules, dict):
        raise ConfigError(f"{path}: [tool.gradfix.rules] must be a table")
    for rule_id, opts in rules.items():
        if known and rule_id not in known:
            raise ConfigError(f"{path}: [tool.gradfix.rules.{rule_id}]: unknown rule")
        if not isinstance(opts, dict):
            raise ConfigError(f"{path}: [tool.gradfix.rules.{rule_id}] must be a table")
        config.rule_options[rule_id] = dict(opts)
    return config


ALL = "ALL"


def selects(selector: str, rule_id: str) -> bool:
    """A selector is a rule id, a prefix of one, or `ALL` (Ruff's spelling for every rule)."""
    return selector == ALL or rule_id.startswith(selector)


def _verifier_keys(config: Config, section: dict, path: str) -> None:
    base = os.path.dirname(path)
    if "python" in section:
        if not isinstance(section["python"], str) or not section["python"]:
            raise ConfigError(f"{path}: [tool.gradfix] python must be a path")
        p = os.path.expanduser(section["python"])
        config.python = os.path.normpath(os.path.join(base, p)) if (os.sep in p or "/" in p) else p  # else on PATH
    if "root" in section:
        config.import_roots = [os.path.normpath(os.path.join(base, r)) for r in _str_list(section["root"], "root", path)]
    for key, attr, kind in (("memory-limit", "memory_limit_mb", int), ("cpu-limit", "cpu_limit_s", float)):
        if key in section:
            v = section[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise ConfigError(f"{path}: [tool.gradfix] {key} must be a positive number")
            setattr(config, attr, kind(v))


def check_selector(code: str, known: set[str], where: str) -> None:
    if code == ALL:
        return
    if known and not any(k.startswith(code) for k in known):
        raise ConfigError(f"{where}: unknown rule selector {code!r}")
