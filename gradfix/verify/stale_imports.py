"""A module-level import that the project's own source (or the installed package) cannot satisfy becomes a stub.

`from Define_Model.model import DeepSpeakerModel`, where `Define_Model/model.py` no longer defines the class (it moved
on, the importing script did not), fails in Python too: the whole file was `untestable` though the unit under check
may never use the name. A name the unit does not need is, as for a package that is not installed (sandbox.StubFinder),
replaced by a stub that raises only when touched (issue item 7); the detail lists it, and a touched one makes the
verdict `untestable`, saying that it is the project's own import that fails.

Only when the failure is the project's own, decided from the project's source, never guessed:
- `cannot import name 'X' from 'M'`, M a module of the project (not in a site-packages) whose source binds no `X`
  at its top level (folder_packages._module_level_names: anywhere, inside if/try/with too, no star import, no
  module `__getattr__`) and whose package folder holds no submodule `X`; or M a package folder with no
  `__init__.py` (a namespace package, or a folder taken as the package whose `__init__.py` is not in the
  repository: what that file defined is not known) that holds no module `X`;
- a name that only module-level code of M binds, which the verifier does not run (sandbox.DROPPED): the real module
  would bind it, the stub stands in for it just the same;
- the circular import of two project modules (`partially initialized module`): Python fails it as well;
- `No module named 'P.S'` for a package P of the project none of whose folders holds `S`: every name is a stub.
- `No module named 'torch._six'`: a submodule gone from the installed version of an installed package (the
  names of a module an installed package no longer has are stub_fallback's).
Anything else (a missing third-party package, an error raised while the module runs, a name the module does define)
is raised as before. Only unguarded top-level `from ... import` statements (not `*`) of the checked file (those the
original has: one a rewrite adds is never guarded) and of the project modules it loads are guarded, and the stubs are
bound only in the importing module: the imported module's own namespace is left as it is, so `hasattr(M, "X")` still
says what Python says.

The stubs (`StaleStub`) also raise on `==`, `!=`, `str()` and formatting, so that a comparison with a name that does
not exist cannot silently take one branch.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import os
import sys

from . import sandbox
from .folder_packages import TAKEN, _module_level_names, taken_folder_reason

STALE: dict[str, str] = {}  # stub name (`M.X`) -> why it is a stub, for the detail
_HELPER = "_gf_stale_imports"


class StaleStub(sandbox.Stub):
    __slots__ = ()

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StaleStub(f"{object.__getattribute__(self, '_gf_name')}.{attr}")

    __hash__ = object.__hash__


for _op in ("__eq__", "__ne__", "__str__", "__format__"):
    setattr(StaleStub, _op, sandbox._make_raiser(_op.strip("_")))


# --------------------------------------------------------------------------- the guard (AST)


ORIGINAL: set[str] = set()  # the checked file's original top-level `from ... import`s (ast.dump): only those


def set_original(source: str) -> None:
    """Only the original's imports may become stubs: an import a rewrite adds that fails is a broken rewrite."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return
    ORIGINAL.update(ast.dump(s) for s in tree.body if isinstance(s, ast.ImportFrom))


def guard(tree: ast.Module, checked: bool = False) -> ast.Module:
    """`tree` with each top-level `from M import a, b` (outside any try) run through `bind` when it raises
    ImportError: `try: <import> / except ImportError: _gf_stale_imports.bind(globals(), M, level, names)`.
    `checked`: the checked file (either version), where only the original's own import statements are guarded."""
    body: list[ast.stmt] = []
    changed = False
    for s in tree.body:
        if isinstance(s, ast.ImportFrom) and s.module != "__future__" and not any(a.name == "*" for a in s.names) \
                and (not checked or ast.dump(s) in ORIGINAL):
            body.append(_guarded_import(s))
            changed = True
        else:
            body.append(s)
    if not changed:
        return tree
    return ast.Module(body=body, type_ignores=list(getattr(tree, "type_ignores", [])))


def _guarded_import(s: ast.ImportFrom) -> ast.stmt:
    names = [(a.name, a.asname or a.name) for a in s.names]
    call = (f"__import__('gradfix.verify.stale_imports', fromlist=['bind']).bind("
            f"globals(), {s.module!r}, {s.level}, {names!r})")
    handler = ast.ExceptHandler(type=ast.Name(id="ImportError", ctx=ast.Load()), name=None,
                                body=[ast.Expr(ast.parse(call, mode="eval").body)])
    out = ast.Try(body=[s], handlers=[handler], orelse=[], finalbody=[])
    for node in [out, *ast.walk(handler)]:
        ast.copy_location(node, s)
        if "end_lineno" in node._attributes:
            node.end_lineno, node.end_col_offset = s.end_lineno, s.end_col_offset  # type: ignore[attr-defined]
    return out


# --------------------------------------------------------------------------- at run time (the worker)


def _local(path: str | None) -> bool:
    """A file or folder of the project: on the import paths, not in an environment, not gradfix's own."""
    if not path:
        return False
    p = os.path.realpath(path)
    if sandbox._is_env_path(p) or p.startswith(os.path.realpath(sys.prefix) + os.sep):
        return False
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if p.startswith(here + os.sep):
        return False
    return any(p.startswith(os.path.realpath(r) + os.sep) for r in sys.path if r and os.path.isdir(r))


def _absolute(module: str | None, level: int, ns: dict) -> str | None:
    """The module a `from ... import` names, resolved as Python resolves a relative import; None when it cannot."""
    if not level:
        return module
    parts = (ns.get("__package__") or "").split(".")
    if not parts[0] or level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{module}" if module else base


def _folders(mod) -> list[str]:
    return [p for p in (getattr(mod, "__path__", None) or []) if isinstance(p, str)]


def _has_submodule(folders: list[str], name: str) -> bool:
    return any(os.path.exists(os.path.join(f, name + s)) for f in folders
               for s in [".py", ""] + list(importlib.machinery.EXTENSION_SUFFIXES))


def _why_absent(mod, mod_name: str, name: str) -> str | None:
    """Why `name` is not in the project module `mod` though the project's source is all there is, or None when
    that is not shown (then the ImportError stands)."""
    origin = getattr(mod, "__file__", None)
    folders = _folders(mod)
    if folders and _has_submodule(folders, name):
        return None  # a submodule: its own import failed, which is not this case
    if origin and origin.endswith(".py"):
        if not _local(origin):
            return None
        if name in sandbox.DROPPED.get(mod_name, set()):
            return (f"'{name}' is set by module-level code of {mod_name} that the verifier does not execute: "
                    f"only imports, definitions and constants run")
        names = _module_level_names(origin)
        if names is None or name in names or "__getattr__" in names:
            return None
        return f"the project's own import error: {_rel(origin)} defines no `{name}` anywhere at its top level"
    if origin is None and folders and all(_local(f) for f in folders):
        where = ", ".join(_rel(f) + "/" for f in folders)
        if mod_name in TAKEN:
            return f"the project's own import error: {taken_folder_reason(mod_name, name, _rel)}"
        return (f"the project's own import error: `{mod_name}` is a folder with no __init__.py ({where}) and holds "
                f"no module `{name}`")
    return None


def _rel(path: str) -> str:
    roots = [r for r in sys.path if r and os.path.isdir(r) and os.path.realpath(path).startswith(
        os.path.realpath(r) + os.sep)]
    if not roots:
        return path
    return os.path.relpath(os.path.realpath(path), os.path.realpath(max(roots, key=len)))


def _missing_package_module(err: ModuleNotFoundError) -> str | None:
    """`No module named 'P.S'` where P is a package of the project none of whose folders holds S."""
    missing = getattr(err, "name", None) or ""
    parent_name, _, last = missing.rpartition(".")
    parent = sys.modules.get(parent_name) if parent_name else None
    folders = _folders(parent)
    if not folders or not all(_local(f) for f in folders) or _has_submodule(folders, last):
        return None
    return (f"the project's own import error: the project's package `{parent_name}` "
            f"({', '.join(_rel(f) + '/' for f in folders)}) holds no module `{last}`")


def _missing_installed_module(err: ModuleNotFoundError) -> str | None:
    """`No module named 'torch._six'`: a submodule gone from the installed version of a package that is installed."""
    missing = getattr(err, "name", None) or ""
    parent_name, _, last = missing.rpartition(".")
    parent = sys.modules.get(parent_name) if parent_name else None
    folders = _folders(parent)
    if not folders or not all(sandbox._is_env_path(os.path.realpath(f)) for f in folders) \
            or _has_submodule(folders, last):
        return None
    top = parent_name.split(".")[0]
    version = getattr(sys.modules.get(top), "__version__", None)
    return f"the installed {top}{' ' + version if isinstance(version, str) else ''} has no module `{missing}`"


def _stub(ns: dict, stub_name: str, asname: str, why: str) -> None:
    ns[asname] = StaleStub(stub_name)
    STALE[stub_name] = why
    entry = f"{stub_name} ({why})"
    sandbox.STUBBED.add(entry)


def bind(ns: dict, module: str | None, level: int, names: list[tuple[str, str]]) -> None:
    """Called from the guard's handler, with the ImportError being handled: bind what the import would have bound,
    stubs for the names shown absent from the project's own source; re-raise anything else."""
    err = sys.exc_info()[1]
    absolute = _absolute(module, level, ns)
    if err is None or absolute is None:
        raise err if err is not None else ImportError(module)
    if isinstance(err, ModuleNotFoundError):
        missing = getattr(err, "name", None) or ""
        why = _missing_package_module(err) or _missing_installed_module(err)
        if why is None or not (absolute == missing or absolute.startswith(missing + ".")):
            raise err
        for name, asname in names:
            _stub(ns, f"{absolute}.{name}", asname, why)
        return
    try:
        mod = importlib.import_module(absolute)
    except ImportError:
        raise err from None
    circular = "partially initialized module" in str(err)
    for name, asname in names:
        try:
            ns[asname] = getattr(mod, name)
            continue
        except AttributeError:
            pass
        if circular and _local(getattr(mod, "__file__", None)):
            why = f"a circular import of the project: {absolute} was still being initialised when `{name}` was read"
        else:
            why = _why_absent(mod, absolute, name)
        if why is None:
            raise err
        _stub(ns, f"{absolute}.{name}", asname, why)


def touched(entries: list[str]) -> list[tuple[str, str]]:
    """(name, why) for each touched stub entry (`pkg (name)`) that stands for a stale import."""
    out: list[tuple[str, str]] = []
    for entry in entries:
        name = entry[entry.find("(") + 1: entry.rfind(")")] if "(" in entry else entry
        for stub_name, why in STALE.items():
            if name == stub_name or name.startswith(stub_name + "."):
                if (stub_name, why) not in out:
                    out.append((stub_name, why))
    return out
