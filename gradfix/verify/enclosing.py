"""Constructor arguments of a block taken from the module that builds it: `self.ff = FeedForward(cfg)` in
`TransformerBlock.__init__(self, cfg)`.

Model files build their blocks inside the enclosing model's constructor, from its own parameters (LLMs-from-scratch:
`GPTModel(cfg)` builds `TransformerBlock(cfg)`, which builds `FeedForward(cfg)` and `MultiHeadAttention(d_in=
cfg["emb_dim"], ...)`). No call of the block has constant arguments, but the enclosing class may be buildable: from a
call in the file or the project (call_sites.py), from a configuration with defaults (configs.py), or, in turn, from
its own enclosing class (at most three levels). The block is then built with the arguments the enclosing constructor
passes it, evaluated with that constructor's parameters bound as it would bind them: the first such call in the file
(classes in source order) whose arguments read only those parameters and what the verifier evaluates at load (the
file's constants, pure builtins and helpers), and whose parameters `__init__` neither rebinds nor mutates
(`cfg["x"] = ...`, `cfg.x = ...`). Nothing else of the enclosing constructor runs.

The verdict's detail says which enclosing class and call the arguments came from, and how that class was built.
"""

from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass
from typing import Callable

from . import source as S
from .call_sites import _eval_in as _eval

MAX_DEPTH = 3


@dataclass
class Enclosing:
    holder: str  # the enclosing class
    call: ast.Call  # the block's call in holder.__init__
    params: list[str]  # the holder's parameters the call reads

    @property
    def text(self) -> str:
        t = ast.unparse(self.call)
        return t if len(t) <= 70 else t[:67] + "..."


def _init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__" and f.args.args), None)


def _changed_params(init: ast.FunctionDef, params: set[str]) -> set[str]:
    """Parameters `__init__` rebinds, or mutates through a subscript or attribute store, or deletes."""
    out: set[str] = set()
    for n in ast.walk(init):
        if isinstance(n, ast.Name) and n.id in params and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
            root = n.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in params:
                out.add(root.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out |= set(n.names) & params
    return out


def enclosing_calls(tree: ast.Module, name: str) -> list[Enclosing]:
    """Each class of the file whose `__init__` calls `name(...)` directly with arguments made of its unchanged
    parameters and expressions the verifier evaluates at load, in source order (one per class: the first call)."""
    ok = S.evaluable(tree)
    out: list[Enclosing] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name == name:
            continue
        init = _init(cls)
        if init is None:
            continue
        a = init.args
        params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs][1:]
        pset = set(params)
        changed = _changed_params(init, pset)
        usable = frozenset(pset - changed)
        for node in ast.walk(init):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
                continue
            if any(isinstance(x, ast.Starred) for x in node.args) or any(k.arg is None for k in node.keywords):
                continue
            parts = list(node.args) + [k.value for k in node.keywords]
            read = {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)} & pset
            if read & changed or not all(ok(p, usable) for p in parts):
                continue
            out.append(Enclosing(cls.name, node, sorted(read)))
            break
    return out


def block_args(tree: ast.Module, name: str, cls: type, mod: types.ModuleType,
               holder_args: Callable[[str, type], tuple[tuple, dict] | None], depth: int = 0
               ) -> tuple[tuple, dict, Enclosing] | None:
    """(args, kwargs, how) for `name` from the first enclosing class whose own constructor arguments
    `holder_args(holder, holder_cls)` gives (None: it cannot be built); None when none serves."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    for enc in enclosing_calls(tree, name):
        holder = getattr(mod, enc.holder, None)
        if not isinstance(holder, type):
            continue
        got = holder_args(enc.holder, holder)
        if got is None:
            continue
        h_args, h_kwargs = got
        try:
            bound = inspect.signature(holder).bind(*h_args, **h_kwargs)
        except (TypeError, ValueError):
            continue
        bound.apply_defaults()
        ns = dict(vars(mod))
        for p in enc.params:
            if p not in bound.arguments:
                break
            ns[p] = bound.arguments[p]
        else:
            where = getattr(mod, "__file__", None) or "<enclosing call>"
            try:
                args = tuple(_eval(x, ns, where) for x in enc.call.args)
                kwargs = {k.arg: _eval(k.value, ns, where) for k in enc.call.keywords}
                sig.bind(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a key the configuration lacks, arguments that do not bind
                continue
            return args, kwargs, enc
    return None

