"""The namespace a GF301 same-object check evaluates its two calls in, without loading the file when it can.

`torch.cuda.amp.autocast(enabled=use_amp)` and `torch.amp.autocast("cuda", enabled=use_amp)` build the same object
or not whatever else the file holds: the check only needs the names the two calls read. Loading the file for them
runs every import of the file (a project's data pipeline, sklearn, pandas: seconds of CPU, and most of the checks
that timed out on the survey's repositories), or fails when one of them does not import here.

When every name the two calls read is `torch` bound by the file's plain `import torch` (and nothing else binds
`torch` at module level), or a name no statement the verifier runs at load binds (a local variable, or
`use_amp = not args.noamp` of a script's top level: the check replaces it by probe values either way), the loaded namespace would give the calls exactly what `{"torch": torch}`
gives: the check runs on that, and the file is not loaded. Anything else (a module constant as an argument,
`from torch.cuda.amp import autocast`, a file that rebinds `torch`) loads the file as before.
"""

from __future__ import annotations

import ast

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


def lean_namespace(old_tree: ast.Module, new_tree: ast.Module, calls: list[ast.expr]) -> dict | None:
    """`{"torch": torch}` when it gives `calls` what both loaded versions would (module docstring); else None."""
    read: set[str] = set()
    for c in calls:
        read |= reads(c)
    for tree in (old_tree, new_tree):
        if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
            return None  # `from utils import *` may bind any name
        kept, computed, _dropped = S.classify_module(tree)
        bound: set[str] = set()  # what the loaded version binds; a name only dropped code sets is a probe either way
        for stmt in kept + computed:
            bound |= S._assigned_names(stmt)
        for name in read:
            if name == "torch":
                if not _plain_torch_only(tree):
                    return None
            elif name in bound or name.startswith("__"):
                return None
    return {"torch": torch}
