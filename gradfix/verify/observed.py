"""Constructor arguments of a block recorded while the module that builds it is built.

enclosing.py reads a block's arguments off a direct call in the enclosing `__init__`, evaluated from that
constructor's parameters. Many models build their blocks in a helper method, in a loop, from attributes set
before (`CifarResNeXt.block()` appends `ResNeXtBottleneck(in_channels, out_channels, pool_stride,
self.cardinality, self.widen_factor)` for each stage): no expression gives the arguments, but running the
enclosing constructor does. When the enclosing class can be built (a call site, a configuration, its own
enclosing class: `holder_args`), it is built once per version with the block's `__init__` wrapped to record the
arguments of the first instance of exactly that class; the block is then built alone with those arguments.

Only plain data is taken (numbers, strings, booleans, None, and tuples, lists and string-keyed dicts of them,
copied at the call): an object (a module, a tensor, a config instance) could be shared or mutated between the
versions, so a holder that passes one is not used. Both versions must record the same arguments, or the unit is
`untestable`. The changed statements the holder's construction runs do not count as covered: the coverage
markers of that build are discarded, so only the block's own check can satisfy the coverage rule. The verdict's
detail names the holder, how it was built, and the arguments.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import types
from dataclasses import dataclass
from typing import Any, Callable

MAX_HOLDERS = 3  # enclosing classes tried, in source order


@dataclass
class Observed:
    holder: str
    args: tuple
    kwargs: dict

    @property
    def text(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        t = ", ".join(parts)
        return t if len(t) <= 80 else t[:77] + "..."


def _plain(v: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, (tuple, list)):
        return len(v) <= 64 and all(_plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return len(v) <= 64 and all(isinstance(k, str) and _plain(x, depth + 1) for k, x in v.items())
    return False


def builders(tree: ast.Module, name: str) -> list[str]:
    """The classes of the file, in source order, any of whose methods calls `name(...)` by that name."""
    out = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name == name:
            continue
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for fn in cls.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(fn)):
            out.append(cls.name)
    return out[:MAX_HOLDERS]


class _NotPlain(Exception):
    pass


def record(cls: type, build: Callable[[], Any]) -> tuple[tuple, dict] | None:
    """The arguments of the first `cls(...)` (an instance of exactly `cls`) made while `build()` runs, copied at
    the call; None when there is none. _NotPlain when they are not plain data; what `build()` raises propagates
    (a holder that does not build gives nothing). The class's `__init__` is restored afterwards."""
    own = "__init__" in cls.__dict__
    orig = cls.__dict__.get("__init__")
    init = cls.__init__
    seen: list = []

    def spy(self, *args, **kwargs):
        if type(self) is cls and not seen:
            plain = _plain(args) and _plain(kwargs)
            seen.append((copy.deepcopy(args), copy.deepcopy(kwargs)) if plain else None)
        return init(self, *args, **kwargs)

    cls.__init__ = spy
    try:
        build()
    finally:
        if own:
            cls.__init__ = orig
        else:
            del cls.__init__
    if seen and seen[0] is None:
        raise _NotPlain(f"the first {cls.__name__}(...) is passed objects, not plain data")
    return seen[0] if seen else None


def observed_args(tree: ast.Module, name: str, cls: type, mod: types.ModuleType,
                  holder_args: Callable[[str, type], tuple[tuple, dict] | None],
                  quiet: Callable[[], Any]) -> tuple[Observed | None, list[str]]:
    """(the arguments recorded while building the first buildable holder of `name`, why the others did not
    serve); `quiet()` is a context manager that discards the build's coverage markers and seeds it."""
    why: list[str] = []
    for holder in builders(tree, name):
        holder_cls = getattr(mod, holder, None)
        if not isinstance(holder_cls, type):
            continue
        got = holder_args(holder, holder_cls)
        if got is None:
            continue
        h_args, h_kwargs = got
        try:
            with quiet():
                seen = record(cls, lambda: holder_cls(*h_args, **h_kwargs))
        except _NotPlain as e:
            why.append(f"building {holder}: {e}")
            continue
        except Exception as e:  # noqa: BLE001
            why.append(f"building {holder} raises {type(e).__name__}")
            continue
        if seen is None:
            why.append(f"building {holder} makes no {name}")
            continue
        return Observed(holder, seen[0], seen[1]), why
    return None, why


def observed_build_args(ctx, name: str, cls: type, mod: types.ModuleType, no_site: Exception,
                        holder_args: Callable) -> tuple[tuple, dict]:
    """module_check's last source of `name`'s constructor arguments: those recorded while building an enclosing
    class of the file (above). The first version's record is kept in `ctx.observed`, and every later build
    (the other version, a retry) must record the same; `no_site` (why nothing else served) is raised, extended,
    when no holder gives them."""
    from .runtime import SEED_BUILD, Untestable, seeded

    @contextlib.contextmanager
    def quiet():
        lines = getattr(ctx.coverage, "lines", None) or {}
        saved = {tag: set(hit) for tag, hit in lines.items()}
        try:
            with seeded(SEED_BUILD):
                yield
        finally:
            for tag, hit in lines.items():  # in place: the recorders are bound to these sets
                hit.clear()
                hit.update(saved.get(tag, ()))

    got, why = observed_args(ctx.analysis.old_tree, name, cls, mod,
                             lambda holder, holder_cls: holder_args(ctx, mod, holder, holder_cls), quiet)
    if got is None:
        if not why:
            raise no_site
        head, sep, hint = str(no_site).partition("; define fixture_")
        raise Untestable(f"{head}; no enclosing class serves ({'; '.join(why[:2])}){sep}{hint}")
    first = ctx.observed.setdefault(name, got)
    if (first.args, first.kwargs) != (got.args, got.kwargs) or first.holder != got.holder:
        raise Untestable(f"{name}'s arguments recorded while building {got.holder} differ between the versions "
                         f"(`{first.text}` and `{got.text}`)")
    note = (f"{name} built with the arguments recorded while building {got.holder} (the first {name} it makes): "
            f"`{got.text}`.")
    if note not in ctx.notes:
        ctx.notes.append(note)
    return copy.deepcopy(got.args), copy.deepcopy(got.kwargs)
