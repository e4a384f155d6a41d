"""Constructor arguments of a unit taken from a call of it in the same file.

A module whose constructor needs arguments was `untestable` unless a fixture built it. Scripts and notebooks
usually build their model once, in the same file, from constants: `model = ConvNet(num_classes=NUM_CLASSES)`. That
call is a configuration the project really uses; the verifier builds both versions with it.

Only a call whose every argument is an expression the verifier already evaluates at load (source.evaluable:
literals, the file's constants, pure builtins and the file's pure helpers) is used; its arguments are evaluated in
each loaded version's own namespace, and must bind to the constructor's signature. The first such call in the file
(in source order) wins. A verdict reached this way is a verdict on that configuration, and its detail says which.
"""

from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass
from typing import Any

from . import source as S


@dataclass
class CallSite:
    line: int
    text: str  # the call as written, shortened
    args: list  # ast nodes
    kwargs: dict  # name -> ast node


def _text(node: ast.Call) -> str:
    t = ast.unparse(node)
    return t if len(t) <= 80 else t[:77] + "..."


def call_sites(tree: ast.Module, name: str) -> list[CallSite]:
    """Calls `name(...)` anywhere in the file whose arguments the verifier may evaluate, in source order."""
    ok = S.evaluable(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        if all(ok(a) for a in node.args) and all(ok(k.value) for k in node.keywords):
            out.append(CallSite(node.lineno, _text(node), list(node.args), {k.arg: k.value for k in node.keywords}))
    out.sort(key=lambda c: c.line)
    return out


def _eval(node: ast.AST, mod: types.ModuleType) -> Any:
    expr = ast.Expression(body=node)
    ast.fix_missing_locations(expr)
    return eval(compile(expr, getattr(mod, "__file__", None) or "<call site>", "eval"), vars(mod))  # noqa: S307


def constructor_args(tree: ast.Module, name: str, cls: type, mod: types.ModuleType) -> tuple[tuple, dict, CallSite] | None:
    """(args, kwargs, site) of the first usable call of `name` in `tree`, evaluated in `mod`; None when none is."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    for site in call_sites(tree, name):
        try:
            args = tuple(_eval(a, mod) for a in site.args)
            kwargs = {k: _eval(v, mod) for k, v in site.kwargs.items()}
            sig.bind(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a constant left unset (it raised at load), or arguments that do not bind
            continue
        return args, kwargs, site
    return None


def prior_build(tree: ast.Module, name: str) -> str | None:
    """The first module-level `name = Cls(...)` of the file, `Cls` a class defined there and every argument one the
    verifier may evaluate; for a setup that only converts the object (`model = model.to(DEVICE)`)."""
    ok = S.evaluable(tree)
    classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    for s in tree.body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and s.targets[0].id == name and isinstance(s.value, ast.Call)):
            continue
        call = s.value
        if not (isinstance(call.func, ast.Name) and call.func.id in classes):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        if all(ok(a) for a in call.args) and all(ok(k.value) for k in call.keywords):
            return ast.unparse(s)
    return None


def reads(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))
