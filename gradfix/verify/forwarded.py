"""A holder's constructor argument forwarded from another holder's constructor: the A3C chain.

held_builds.held_build builds a network the way a plain object's `__init__` builds it (`self.local_network =
TwoHeadNetwork(self.obs_dim, self.action_dim)` in `Worker.__init__(self, id, env, ...)`), with the parameters taken
from a call of that holder. In A3C code the only call of the worker is in the agent's own constructor, which passes
its parameter on (`A3CAgent.__init__(self, env, ...)`: `self.workers = [Worker(i, env, ...) for i in ...]`), and the
agent is built by the script from an environment it makes (`agent = A3CAgent(env, gamma, lr, ...)` after `env =
gym.make("CartPole-v0")`). `forwarded_values` follows that one step: an argument that is a bare parameter of the
enclosing `__init__` of a class of the caller's file, never rebound nor mutated by a store in that `__init__`
(enclosing._changed_params), takes the value a call of that class gives it, found as held_build finds calls
(the caller's file, then the project's other files; constants and `gym.make` environments only). A parameter left
to its default there is not used (its default was not evaluated here). One level only: the outer call's arguments
must be values, not forwarded again.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import os
import types
from typing import Any

_DEFAULT = object()  # a parameter the outer call leaves to its default


def _owner(tree: ast.Module, fn: Any) -> ast.ClassDef | None:
    """The class of the file whose `__init__` is `fn`."""
    if not (isinstance(fn, ast.FunctionDef) and fn.name == "__init__" and fn.args.args):
        return None
    return next((c for c in tree.body if isinstance(c, ast.ClassDef) and any(m is fn for m in c.body)), None)


def _signature(fn: ast.FunctionDef) -> inspect.Signature:
    """`fn`'s signature without its first parameter, defaults as _DEFAULT (never evaluated)."""
    P = inspect.Parameter
    a = fn.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    params = []
    for i, x in enumerate(positional):
        if i == 0:
            continue
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(x.arg, kind, default=_DEFAULT if i >= first_default else P.empty))
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for x, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(P(x.arg, P.KEYWORD_ONLY, default=_DEFAULT if d is not None else P.empty))
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def forwarded_values(site, sig: inspect.Signature, needed: set[str], mod: types.ModuleType,
                     root: str | None) -> tuple[dict, Any] | None:
    """(the values of `needed`, a CallSite describing the chain) when `site` passes at least one of them on from
    its enclosing `__init__`'s parameters (see the module docstring); None otherwise."""
    from .call_sites import UNKNOWN, call_sites, constants_namespace, project_sites
    from .enclosing import _changed_params

    tree, fn, path = site.tree, site.scope, site.path
    owner = _owner(tree, fn) if tree is not None else None
    if owner is None:
        return None
    try:
        b = sig.bind(*range(len(site.args)), **{k: k for k in site.kwargs})
    except TypeError:
        return None
    params = [x.arg for x in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs][1:]
    changed = _changed_params(fn, set(params))
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    passed: dict[str, str] = {}  # our parameter -> the enclosing __init__'s parameter it is given
    for p in needed:
        if p not in b.arguments or sig.parameters[p].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                              inspect.Parameter.VAR_KEYWORD):
            return None
        slot = b.arguments[p]
        node = site.args[slot] if isinstance(slot, int) else site.kwargs[slot]
        if node is UNKNOWN:
            node = site.raw[slot] if isinstance(slot, int) else site.raw_kw.get(slot)
        if not (isinstance(node, ast.Name) and node.id in params and node.id not in changed | stored):
            return None  # only a whole forwarded parameter (a value argument would have bound already)
        passed[p] = node.id
    outer_sig = _signature(fn)
    want = set(passed.values())
    outer_sites = call_sites(tree, owner.name, every=False)
    shown = os.path.relpath(path, root).replace(os.sep, "/") if path and root else None
    for s in outer_sites:
        s.namespace, s.file = constants_namespace(tree), shown or "the caller's file"
    if path and root:
        outer_sites = outer_sites + project_sites(path, tree, owner.name, root, every=False)
    for outer in outer_sites:
        try:
            got = outer.bound(outer_sig, want, mod)
        except Exception:  # noqa: BLE001 - an environment that cannot be made, a constant left unset
            continue
        if got is None or any(v is _DEFAULT for v in got.values()):
            continue
        values = {p: got[q] for p, q in passed.items()}
        names = ", ".join(sorted(want))
        text = (f"{site.text}` in {owner.name}.__init__, which passes on its {names} from "
                f"`{outer.text}` (the call of {owner.name} at {outer.place})")
        return values, dataclasses.replace(site, text=text, prelude=[], defaults=frozenset())  # values: the outer call's
    return None
