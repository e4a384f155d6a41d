"""A folder of the project that was a package in its author's checkout, though the repository holds no `__init__.py`.

Python, run from the project's root, resolves `import a.b` in one folder of the search path in this order: a folder
`b/` with an `__init__.py` (a regular package), then a module `b.py`, and only if neither is there a folder `b/`
without one (a namespace package). So where `b.py` and a folder `b/` of modules stand side by side and the folder has
no `__init__.py`, `import a.b.c` fails ("'a.b' is not a package") and `a.b` is the module file.

A project whose `.gitignore` ignores `__init__.py` did not commit its packages' `__init__.py` files: in the author's
checkout the folder had one, and it shadowed the module file. Only then, and only for a folder that holds Python files
and stands beside a module of the same name, the verifier takes the folder as the package (its `__init__.py`, which
the repository lacks, as empty) and says so in the detail. Without that evidence Python's own resolution stands and
the import error is reported as the project's own (`shadowed_folder_hint`).
"""
from __future__ import annotations

import importlib.machinery
import os

NOTES: list[str] = []  # one sentence per folder taken as a package, for the verdict's detail
TAKEN: dict[str, str] = {}  # package name -> the module file its folder was taken over

_IGNORES_INIT = {"__init__.py", "**/__init__.py", "/__init__.py"}
_ignores_cache: dict[str, bool] = {}


def _gitignore_ignores_init(folder: str, stop: str) -> bool:
    """Whether a `.gitignore` in `folder` or a folder above it (up to `stop`) ignores every `__init__.py`."""
    d = os.path.realpath(folder)
    stop = os.path.realpath(stop)
    while True:
        if d not in _ignores_cache:
            found = False
            try:
                with open(os.path.join(d, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        line = line.strip()
                        # "/__init__.py" anchors at this .gitignore's folder only: it counts for that folder
                        if line in _IGNORES_INIT and (line != "/__init__.py" or d == os.path.realpath(folder)):
                            found = True
                            break
            except OSError:
                pass
            _ignores_cache[d] = found
        if _ignores_cache[d]:
            return True
        parent = os.path.dirname(d)
        if d == stop or parent == d or not (d + os.sep).startswith(stop.rstrip(os.sep) + os.sep):
            return False
        d = parent


def _has_modules(folder: str) -> bool:
    try:
        return any(n.endswith(".py") for n in os.listdir(folder))
    except OSError:
        return False


def shadowed_folder(name: str, entries, is_local) -> tuple[str, str] | None:
    """(folder, module file) where Python's resolution of `name` over the search `entries` stops at a module
    `b.py` standing beside a folder `b/` of Python files with no `__init__.py`, both local to the project."""
    last = name.rpartition(".")[2]
    for entry in entries or ():
        if not isinstance(entry, str) or not os.path.isdir(entry or "."):
            continue
        folder = os.path.join(entry, last)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return None  # a regular package wins, as in Python
        mod_file = os.path.join(entry, last + ".py")
        if os.path.isfile(mod_file):
            if os.path.isdir(folder) and _has_modules(folder) and is_local(mod_file):
                return folder, mod_file
            return None
        if any(os.path.isfile(os.path.join(entry, last + s)) for s in importlib.machinery.EXTENSION_SUFFIXES):
            return None
    return None


def folder_package_spec(name: str, path, roots: list[str], is_local):
    """A package spec for `name` from the folder that shadowed module file hid, when the project's `.gitignore`
    says its `__init__.py` was left out of the repository; else None (Python's own resolution)."""
    import sys

    entries = list(path) if path is not None else list(sys.path)
    hit = shadowed_folder(name, entries, is_local)
    if hit is None:
        return None
    folder, mod_file = hit
    root = next((r for r in roots if os.path.realpath(folder).startswith(os.path.realpath(r).rstrip(os.sep) + os.sep)),
                None)
    if root is None or not _gitignore_ignores_init(os.path.dirname(folder), root):
        return None
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [folder]
    rel = os.path.relpath(folder, root)
    note = (f"{rel}/ was taken as the package `{name}` rather than the module file {os.path.relpath(mod_file, root)} "
            f"beside it: the project's .gitignore ignores __init__.py, so the author's checkout had one there "
            f"(taken as empty)")
    if note not in NOTES:
        NOTES.append(note)
    TAKEN[name] = mod_file
    return spec


def shadowed_folder_hint(err: BaseException) -> str:
    """For "'a.b' is not a package" where a.b is a module file beside a folder of the same name: say that Python,
    run from the project's root, resolves it the same way (the project's own import error)."""
    msg = str(err)
    if "is not a package" not in msg:
        return ""
    import sys

    mod = sys.modules.get(msg.rsplit("'", 2)[-2]) if msg.count("'") >= 4 else None
    origin = getattr(mod, "__file__", None) or ""
    base = origin[:-3] if origin.endswith(".py") else ""
    if not base or not os.path.isdir(base) or os.path.isfile(os.path.join(base, "__init__.py")):
        return ""
    return (f"; this is the project's own import error: run from the project's root, Python resolves "
            f"`{mod.__name__}` to the module file {os.path.basename(origin)}, which shadows the folder "
            f"{os.path.basename(base)}/ beside it (no __init__.py there); add one to make the folder the package")


def _module_level_names(path: str) -> set[str] | None:
    """Every name a module file binds at its top level (inside if/try/with/for included), or None when it cannot
    say (does not parse, or a star import)."""
    import ast

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    names: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    return None
                names.add(a.asname or a.name.split(".")[0])
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                for a in sub.names:
                    if a.name == "*":
                        return None
                    names.add(a.asname or a.name.split(".")[0])
            elif isinstance(sub, ast.Global):
                names.update(sub.names)
    return names


def taken_folder_reason(mod_name: str, wanted: str, rel) -> str:
    """`wanted` missing from the folder taken as the package `mod_name` (its __init__.py not in the repository,
    taken as empty): what the module file it shadowed has, and that what the missing __init__.py defined is not
    known. `rel` shows a path (relative to the project)."""
    hidden = TAKEN[mod_name]
    names = _module_level_names(hidden)
    also = (f"; the module file {rel(hidden)} beside the folder does not define it either, so the import fails "
            f"whichever of the two is the package" if names is not None and wanted not in names else "")
    return (f"`{mod_name}` is the folder taken as the package, whose __init__.py is not in the repository "
            f"(taken as empty): none of its modules is `{wanted}`, and what that file defined is not known{also}")


def project_import_hint(err: BaseException, root: str | None) -> str:
    """Where an import of the project's own modules fails as Python itself would fail it, run from the project's
    root, say so: a module file that shadows a folder (above), a name that the project module's source never binds
    at its top level, or a submodule that none of the folders of a package of the project holds."""
    hint = shadowed_folder_hint(err)
    if hint or not root or not isinstance(err, ImportError):
        return hint
    import sys

    top = os.path.realpath(root).rstrip(os.sep) + os.sep
    msg = str(err)
    own = ("; this is the project's own import error (Python, run from the project's root, fails the same way): ")
    if msg.startswith("cannot import name") and "circular import" not in msg:
        origin = getattr(err, "path", None) or ""
        mod_name = getattr(err, "name", None) or ""
        wanted = msg.split("'")[1] if msg.count("'") >= 2 else ""
        if mod_name in TAKEN and wanted:
            return "; " + taken_folder_reason(mod_name, wanted, lambda p: os.path.relpath(p, root))
        if not origin.endswith(".py") or not os.path.realpath(origin).startswith(top) or not wanted:
            return ""
        names = _module_level_names(origin)
        if names is None or wanted in names or "__getattr__" in names:
            return ""
        if os.path.basename(origin) == "__init__.py":
            folder = os.path.dirname(origin)
            if any(os.path.exists(os.path.join(folder, wanted + s)) for s in (".py", "")):
                return ""  # a submodule of the package: not this case
        return own + (f"{os.path.relpath(origin, root)} defines no `{wanted}` anywhere at its top level "
                      f"(`{mod_name}` no longer has it)")
    if isinstance(err, ModuleNotFoundError) and (getattr(err, "name", None) or "").count("."):
        missing = err.name
        parent_name, _, last = missing.rpartition(".")
        parent = sys.modules.get(parent_name)
        locations = list(getattr(parent, "__path__", None) or [])
        if not locations or not all(os.path.realpath(p).startswith(top) for p in locations):
            return ""
        for loc in locations:
            if any(os.path.exists(os.path.join(loc, last + s)) for s in [".py", ""] +
                   list(importlib.machinery.EXTENSION_SUFFIXES)):
                return ""
        shown = ", ".join(os.path.relpath(p, root) + "/" for p in locations)
        return own + f"the project's package `{parent_name}` ({shown}) holds no module `{last}`"
    return ""
