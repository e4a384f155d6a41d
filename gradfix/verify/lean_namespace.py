"""The namespace a GF301 same-object check evaluates its two calls in, without loading the file when it can.

`torch.cuda.amp.autocast(enabled=use_amp)` and `torch.amp.autocast("cuda", enabled=use_amp)` build the same object
or not whatever else the file holds: the check only needs the names the two calls read. Loading the file for them
runs every import of the file (a project's data pipeline, sklearn, pandas: seconds of CPU, and most of the checks
that timed out on the survey's repositories), or fails when one of them does not import here.

When every name the two calls read is `torch` bound by the file's plain `import torch` (and nothing else binds
`torch` at module level), or a name no statement the verifier runs at load binds (a local variable, or
`use_amp = not args.noamp` of a script's top level: the check replaces it by probe values either way), the loaded
namespace would give the calls exactly what `{"torch": torch}` gives: the check runs on that, and the file is not
loaded. The same holds for a name bound by a top-level `from torch.cuda.amp import autocast` (any `torch` module)
and by nothing else anywhere in either version (no other import, store, parameter, `def`, `global`): loading would
bind it to that very object, so it is imported from torch alone (vits's `train.py`, whose other imports need a
compiled extension). Anything else (a module constant as an argument, a name imported twice, a file that rebinds
`torch`) loads the file as before.
"""

from __future__ import annotations

import ast
import importlib

import torch

from . import source as S


def reads(tree: ast.AST) -> set[str]:
    """The names an expression reads (its lambdas' parameters and comprehension targets left out)."""
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            bound |= {a.arg for a in n.args.args}
        elif isinstance(n, ast.comprehension):
            bound |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _plain_torch_only(tree: ast.Module) -> bool:
    """`torch` is bound at module level only by `import torch` / `import torch.x` (never aliased to it, assigned, or
    imported from elsewhere), and by at least one such statement."""
    plain = 0
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if (a.asname or a.name.split(".")[0]) == "torch":
                    if a.asname is not None and a.name != "torch":
                        return False
                    plain += 1
        elif isinstance(stmt, ast.ImportFrom):
            if any((a.asname or a.name) == "torch" for a in stmt.names):
                return False
        elif isinstance(stmt, ast.Name) and stmt.id == "torch" and not isinstance(stmt.ctx, ast.Load):
            return False
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == "torch":
            return False
    return plain > 0


def _module_names(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement binds in the module's namespace: its own targets, those of the blocks it
    holds, a `def`'s or class's name; not the locals of a function or class body (they never become module
    attributes; a `global` declaration is counted by the caller)."""
    out: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            stack.extend(n.decorator_list)  # evaluated in the module's scope (a walrus there binds in it)
            continue
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            out |= {x.target.id for x in ast.walk(n) if isinstance(x, ast.NamedExpr)}  # `:=` binds outside
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _torch_import(tree: ast.Module, name: str) -> tuple[str, str] | None:
    """(module, attribute) when `name` is bound in `tree` only by one top-level `from torch... import attr [as
    name]` (level 0): no other statement, nested scope, parameter or handler anywhere binds that spelling."""
    found: list[tuple[str, str]] = []
    for st in tree.body:
        if isinstance(st, ast.ImportFrom) and st.level == 0 and st.module and (
                st.module == "torch" or st.module.startswith("torch.")):
            found += [(st.module, a.name) for a in st.names if (a.asname or a.name) == name]
    if len(found) != 1:
        return None
    binds = 0
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id == name:
            return None
        if isinstance(n, ast.arg) and n.arg == name:
            return None
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            return None
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None
        if isinstance(n, ast.ExceptHandler) and n.name == name:
            return None
        if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name == name:
            return None
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            binds += sum(1 for a in n.names if (a.asname or a.name.split(".")[0]) == name)
    return found[0] if binds == 1 else None


def lean_namespace(old_tree: ast.Module, new_tree: ast.Module, calls: list[ast.expr]) -> dict | None:
    """`{"torch": torch}` (and the names imported from torch alone) when it gives `calls` what both loaded versions
    would (module docstring); else None."""
    read: set[str] = set()
    for c in calls:
        read |= reads(c)
    imported: dict[str, object] = {}  # name -> the object `from torch.x import y` binds it to, in both versions
    for name in sorted(read - {"torch"}):
        where = {_torch_import(t, name) for t in (old_tree, new_tree)}
        if len(where) == 1 and None not in where:
            module, attr = where.pop()
            try:
                imported[name] = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return None
    for tree in (old_tree, new_tree):
        if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
            return None  # `from utils import *` may bind any name
        kept, computed, _dropped = S.classify_module(tree)
        # what the loaded version binds at module level (a function's own locals never are); a name only dropped
        # code sets is a probe either way, and one a function declares `global` counts as bound
        bound = {x for n in ast.walk(tree) if isinstance(n, ast.Global) for x in n.names}
        # a name a function imports for itself (`from torch.cuda.amp import GradScaler` in its body) is the call's
        # own when the call is in that function: not a probe; the loaded path sees which
        bound |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        for stmt in kept + computed:
            bound |= _module_names(stmt)
        for name in read:
            if name == "torch":
                if not _plain_torch_only(tree):
                    return None
            elif name in imported:
                continue
            elif name in bound or name.startswith("__"):
                return None
    return {"torch": torch, **imported}
