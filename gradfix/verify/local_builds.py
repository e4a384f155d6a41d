"""Modules a function builds before the statement that builds the checked receiver: `flows = [IAF(dim=d) for _ in
range(n)]` then `model = NormalizingFlowModel(flows)` in a test function (held_builds.function_build).

The setup reads `flows`, which no constant gives. A name counts as a local build when the function's own body (not
a branch or loop) binds it once, before the setup's line, to
- a call `Cls(args)` (or `Cls(args).cuda()` / `.to(device)` / `.cpu()`, placed as the check places it) whose
  arguments the verifier may evaluate (literals, the module's and the function's constants, earlier local builds),
- a list or tuple of such calls, or `[Cls(args) for _ in range(k)]` (one `for` over `range` of evaluable bounds, no
  condition), or
- a tensor of evaluable literals (`mask = torch.tensor([1., 0., 1.])`: `torch.tensor`, `zeros`, `ones`, `eye`,
  `arange`, `full`),
and the function never rebinds, mutates (an item or attribute store, a method call on it) or passes it to anything
before the setup line but another build. At run time each callee must be a class that subclasses `nn.Module`, or
torch's own factory (checked before it is called): a factory function, a plain class or anything else is refused,
and the setup stays as unbuildable as it was. The build runs the project's own constructors, as the setup does; the
verdict's detail names the statements.
"""

from __future__ import annotations

import ast

from .call_sites import _eval_in, _mutated_roots
from .held_builds import _unplaced


class NotAModule(Exception):
    """A local build's callee is not an nn.Module class."""


def _calls(value: ast.expr) -> list[ast.Call] | None:
    """The build calls of an accepted shape of `value`, else None."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts and all(isinstance(e, ast.Call) for e in value.elts):
        return list(value.elts)
    if isinstance(value, ast.ListComp) and isinstance(value.elt, ast.Call) and len(value.generators) == 1:
        g = value.generators[0]
        if (not g.ifs and not g.is_async and isinstance(g.target, ast.Name) and isinstance(g.iter, ast.Call)
                and isinstance(g.iter.func, ast.Name) and g.iter.func.id == "range" and not g.iter.keywords):
            return [value.elt]
    return None


def _placements(call: ast.Call) -> list[ast.Call]:
    out = []
    while call is not _unplaced(call):
        out.append(call)
        call = call.func.value
    return out


def _callee_ok(func: ast.expr) -> bool:
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name)


def _accepted(value: ast.expr, ok, known: frozenset) -> bool:
    calls = _calls(value)
    if not calls:
        return False
    inner = known
    if isinstance(value, ast.ListComp):
        g = value.generators[0]
        if not all(ok(a, known) for a in g.iter.args):
            return False
        inner = known | {g.target.id}
    for placed in calls:
        c = _unplaced(placed)
        if c is not placed and not all(ok(a, inner) for p in _placements(placed) for a in p.args):
            return False  # `.to(device)` with a device the verifier cannot evaluate
        if not _callee_ok(c.func) or any(isinstance(a, ast.Starred) for a in c.args) \
                or any(k.arg is None for k in c.keywords):
            return False
        if not all(ok(a, inner) for a in c.args) or not all(ok(k.value, inner) for k in c.keywords):
            return False
    return True


def with_builds(fn, ok, stmt: ast.stmt, pre: list) -> tuple[list, set]:
    """`pre` (the function's constants before `stmt`, in order) with the local builds `stmt` may read merged in at
    their places; and the names that are builds (evaluated with `evaluate`)."""
    if fn is None or isinstance(fn, ast.Lambda):
        return pre, set()
    consts = dict(pre)
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for x in n.names:
                stores[x] = stores.get(x, 0) + 2
    a = fn.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
    mutated = _mutated_roots(fn)
    out: list = []
    builds: set = set()
    known: set = set()
    for st in fn.body:
        if st.lineno >= stmt.lineno:
            break
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        name = st.targets[0].id
        if name in consts and consts[name] is st.value:
            out.append((name, st.value))
            known.add(name)
        elif (stores.get(name) == 1 and name not in params and name not in mutated
              and not _passed_between(fn, name, st.lineno, stmt.lineno) and _accepted(st.value, ok, frozenset(known))):
            out.append((name, st.value))
            builds.add(name)
            known.add(name)
    if not builds:
        return pre, set()
    rest = [(n, v) for n, v in pre if not any(n == m for m, _ in out)]
    return out + rest, builds


def _passed_between(fn, name: str, start: int, end: int) -> bool:
    """`name` read between lines `start` and `end` by anything but a later local build's own arguments: passed to
    a call that may change it (`init_weights(flows)`), before the setup uses it."""
    for st in fn.body:
        if not (start < st.lineno < end):
            continue
        if isinstance(st, ast.Assign) and _calls(st.value) is not None:
            continue  # another build taking it as an argument: it holds the object, as the setup will
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(st)):
            return True
    return False


def evaluate(value: ast.expr, ns: dict, where: str):
    """A local build's value, after checking that each callee is an nn.Module class (NotAModule otherwise)."""
    import torch.nn as nn

    import torch

    factories = (torch.tensor, torch.zeros, torch.ones, torch.eye, torch.arange, torch.full)
    for c in _calls(value) or ():
        c = _unplaced(c)  # `SimpleFlow(10).cuda()`: the class is the inner call's (the check redirects cuda to cpu)
        cls = _eval_in(c.func, ns, where)
        if any(cls is f for f in factories) and not isinstance(value, ast.ListComp):
            continue  # `mask = torch.tensor([1., 0., 1.])`: a tensor of evaluable literals, the same in both versions
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
            raise NotAModule(f"`{ast.unparse(c.func)}` is not an nn.Module class")
    return _eval_in(value, ns, where)
