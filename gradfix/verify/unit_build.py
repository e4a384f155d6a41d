"""Building a unit for the module check: a fixture, the constructor's defaults, a call of it in the file or the
project, a configuration with defaults, or the arguments its enclosing module passes it; and the input it takes.

Both versions are built the same way (the call chosen for the first one built is used for the second), and the
detail of the verdict says which way it was (ctx.built_from, ctx.notes).
"""
from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn as nn

from .context import Ctx, fixture_hint
from .inputs import infer_input, required_params
from .runtime import SEED_BUILD, Untestable, seeded


def _build(ctx: Ctx, name: str, mod: types.ModuleType) -> tuple[Any, tuple | None]:
    fx = ctx.fixture(name)
    if fx is not None:
        with seeded(SEED_BUILD):
            res = fx(mod)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise Untestable(f"fixture_{name} must return (module, inputs), got {type(res).__name__}")
        obj, inputs = res
        if torch.is_tensor(inputs):
            inputs = (inputs,)
        inputs = tuple(inputs)
        return obj, inputs
    obj = getattr(mod, name, None)
    if obj is None:
        raise Untestable(f"{name} is not defined once the module is loaded")
    if isinstance(obj, type) and issubclass(obj, nn.Module):
        req = required_params(obj.__init__, skip_first=True)
        if req:
            try:
                args, kwargs = _call_site_args(ctx, name, obj, mod, req)
            except Untestable as u:
                try:
                    args, kwargs = (), _config_args(ctx, name, obj, mod, req, u)
                except Untestable as none:
                    got = _block_args(ctx, name, obj, mod, 0)  # built by its enclosing module (enclosing.py)
                    if got is None:  # recorded while its enclosing module is built (observed.py)
                        from .observed import observed_build_args

                        got = observed_build_args(ctx, name, obj, mod, none, _holder_args)
                    args, kwargs = got
            with seeded(SEED_BUILD):
                return obj(*args, **kwargs), None
        with seeded(SEED_BUILD):
            return obj(), None
    if isinstance(obj, type):
        raise Untestable(f"class {name} is not an nn.Module, so there is no forward() to run; " + fixture_hint(name, "callable"))
    raise Untestable(f"function {name}: no call site to build its arguments from; " + fixture_hint(name, "function"))


def _call_site_args(ctx: Ctx, name: str, cls: type, mod: types.ModuleType, req: list[str]) -> tuple[tuple, dict]:
    """The constructor arguments of a call of `name` in the original file, else in another file of the project
    (call_sites.py); both versions use the call chosen for the first one built."""
    from .call_sites import constructor_args

    site = ctx.built_from.get(name)
    if site is not None:
        return site.values(mod)
    found = constructor_args(ctx.analysis.old_tree, name, cls, mod, ctx.req.path, ctx.req.project_root)
    if found is None:
        where = "in the file" if not ctx.req.project_root else "in the file or the project's other files"
        raise Untestable(f"constructor of {name} needs arguments ({', '.join(req)}), and no call of {name} {where} "
                         f"has arguments the verifier can evaluate (constants only); " + fixture_hint(name))
    args, kwargs, site = found
    ctx.built_from[name] = site
    return args, kwargs


def _config_args(ctx: Ctx, name: str, cls: type, mod: types.ModuleType, req: list[str], no_site: Untestable) -> dict:
    """Keyword arguments built from configuration objects with defaults (configs.py), the same recipe for both
    versions; `no_site` (why no call site served) is raised, extended, when no configuration fits."""
    from .configs import config_plan, reads_summary

    plan = ctx.config_plans.get(name)
    if plan is None:
        plan = config_plan(ctx.analysis.old_tree, name, cls, mod, req)
        if plan is None:
            msg = str(no_site)
            reads = reads_summary(ctx.analysis.old_tree, name, req)
            extra = (f"; no configuration with defaults of the project (a dataclass, NamedTuple or config class, "
                     f"the file's argparse defaults or a dict literal of the file) has every attribute or key the "
                     f"constructor reads ({reads})") if reads else ""
            head, sep, hint = msg.partition("; define fixture_")
            raise Untestable(head + extra + sep + hint)
        ctx.config_plans[name] = plan
    with seeded(SEED_BUILD):
        return plan.kwargs(mod)


def _holder_args(ctx: Ctx, mod: types.ModuleType, holder: str, holder_cls: type,
                 depth: int = 0) -> tuple[tuple, dict] | None:
    """The constructor arguments of an enclosing module: none needed, a call site, a configuration, or its own
    enclosing module's (at most enclosing.MAX_DEPTH levels); None when it is not buildable."""
    from .enclosing import MAX_DEPTH

    if not issubclass(holder_cls, nn.Module):
        return None
    req = required_params(holder_cls.__init__, skip_first=True)
    if not req:
        return (), {}
    try:
        return _call_site_args(ctx, holder, holder_cls, mod, req)
    except Untestable as u:
        try:
            return (), _config_args(ctx, holder, holder_cls, mod, req, u)
        except Untestable:
            return _block_args(ctx, holder, holder_cls, mod, depth + 1) if depth + 1 < MAX_DEPTH else None


def _block_args(ctx: Ctx, name: str, cls: type, mod: types.ModuleType, depth: int) -> tuple[tuple, dict] | None:
    """The arguments the enclosing module's constructor passes `name`, that module built from a call site, a
    configuration, or its own enclosing module (enclosing.py); None when none is buildable."""
    from .enclosing import block_args

    got = block_args(ctx.analysis.old_tree, name, cls, mod,
                     lambda holder, holder_cls: _holder_args(ctx, mod, holder, holder_cls, depth))
    if got is None:
        return None
    args, kwargs, enc = got
    note = f"{name} built with the arguments {enc.holder}.__init__ passes it: `{enc.text}`."
    if note not in ctx.notes:
        ctx.notes.append(note)
    return args, kwargs


def infer_unit_input(ctx: Ctx, name: str, old: Any, new: Any) -> tuple:
    """The inferred input; a dict batch when forward reads string keys of its one argument (batches.py)."""
    from .batches import forward_keys, regression_forward

    keys = forward_keys(name, ctx.analysis.old_tree, ctx.analysis.new_tree) if isinstance(old, nn.Module) else []
    notes: dict = {}
    inputs = infer_input(name, [old, new], ctx.dtype, ctx.explain, batch_keys=keys, notes=notes,
                         floats_first=bool(keys) and regression_forward(name, ctx.analysis.old_tree))
    if notes.get("input"):
        ctx.input_notes[name] = notes["input"]
    return inputs
