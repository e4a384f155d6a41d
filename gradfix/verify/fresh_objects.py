"""Which local names of a pure function hold only objects the call itself made, so that filling them is no effect.

A helper that builds a vocabulary fills a dict it has just made:

    def build_vocab():
        vocab = {}
        for i, c in enumerate(chars):
            vocab[c] = i + 1
        vocab["unk"] = len(vocab) + 1
        return vocab

`vocab[c] = ...` changes an object, but one no code outside the call can hold before the call returns it, so the
function still computes a value from its arguments and nothing else (pure_calls.py). A name is *owned* when every
binding of it in the function is one of

- `name = <a new container>`: a dict, list or set display, a comprehension, or a call of the builtin `dict`, `list`
  or `set` (each returns a new object of exactly that type, whatever its arguments; pure_calls checks the call
  is of the builtin, not a name the file binds);
- `name = <an immutable literal>` (`n = 0`, `s = ""`);
- `name op= value` (the result of an operator on an owned object: the same object changed in place, or a new one;
  for the builtin values a pure function sees, never an argument's object);

and it is neither a parameter nor a name bound any other way (a loop target, an unpacking, `a = b = []`). Only
owned names may be filled, and only directly: `vocab[c] = v` (the name's containers all dicts or lists), a method
of each of its container types that only changes the receiver (`out.append(x)`, `seen.add(w)`, pure_methods.MUTATE),
`n += 1`. Not `vocab[a][b] = v` or `vocab[a] += v`: `vocab[a]` may be an argument's object stored in it.
"""

from __future__ import annotations

import ast
from typing import Callable

from .pure_methods import MUTATE

CONTAINERS = {ast.Dict: "dict", ast.DictComp: "dict", ast.List: "list", ast.ListComp: "list", ast.Set: "set",
              ast.SetComp: "set"}
BUILTIN_CONTAINERS = ("dict", "list", "set")
IMMUTABLE = (int, float, complex, str, bytes, bool)


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _comprehension_targets(fn: ast.AST) -> set[int]:
    """ids of the Name nodes a comprehension binds (its own scope, not the function's)."""
    return {id(n) for c in ast.walk(fn) if isinstance(c, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
            for g in c.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}


def _container(value: ast.expr) -> str | None:
    kind = CONTAINERS.get(type(value))
    if kind:
        return kind
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in BUILTIN_CONTAINERS:
        return value.func.id
    return None


class Owned:
    """The owned names of a function (see the module docstring) and the statements that fill them."""

    def __init__(self, fn: ast.FunctionDef, pure: frozenset, expr_ok: Callable):
        self.pure, self.expr_ok = pure, expr_ok
        a = fn.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
        kinds: dict[str, set[str]] = {p: {"other"} for p in params}
        accounted: set[int] = _comprehension_targets(fn)
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                kind = _container(n.value) or (
                    "const" if isinstance(n.value, ast.Constant) and isinstance(n.value.value, IMMUTABLE) else "other")
                kinds.setdefault(n.targets[0].id, set()).add(kind)
                accounted.add(id(n.targets[0]))
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                kinds.setdefault(n.target.id, set()).add("aug")
                accounted.add(id(n.target))
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                for x in n.names:
                    kinds.setdefault(x, set()).add("other")
        for n in ast.walk(fn):  # any other binding: a loop target, an unpacking, `a = b = []`, `del`
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in accounted:
                kinds.setdefault(n.id, set()).add("other")
        self.kinds = {k: v for k, v in kinds.items() if "other" not in v}

    def containers(self, name: str) -> set[str] | None:
        """The container types an owned name may hold, or None when it may hold anything else too."""
        kinds = self.kinds.get(name)
        if not kinds or "const" in kinds:
            return None
        types = kinds - {"aug"}
        return types or None

    def _ok(self, node: ast.AST, names: set[str]) -> bool:
        return self.expr_ok(node, frozenset(names), self.pure)

    def fills(self, s: ast.stmt, names: set[str]) -> bool:
        """`s` only changes an owned object that is bound here (`names`), from expressions pure_calls accepts."""
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript):
            t = s.targets[0]
            if not (isinstance(t.value, ast.Name) and t.value.id in names):
                return False
            types = self.containers(t.value.id)
            return bool(types) and types <= {"dict", "list"} and self._ok(t.slice, names) and self._ok(s.value, names)
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            return s.target.id in names and s.target.id in self.kinds and self._ok(s.value, names)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute):
            call, f = s.value, s.value.func
            if not (isinstance(f.value, ast.Name) and f.value.id in names):
                return False
            types = self.containers(f.value.id)
            return (bool(types) and all(f.attr in MUTATE.get(t, ()) for t in types)
                    and all(not isinstance(x, ast.Starred) and self._ok(x, names) for x in call.args)
                    and all(k.arg is not None and self._ok(k.value, names) for k in call.keywords))
        return False

    def mutated_in(self, loop: ast.For) -> set[str]:
        """Names a loop's body may fill."""
        out: set[str] = set()
        for n in (m for st in loop.body for m in ast.walk(st)):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
                out.add(n.value.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                out.add(n.func.value.id)
        return out
