"""The `scale` contract (GF201): gradients grow by exactly the removed factor, on the model or the loss
expression. Picked up by `checks.extra_checks`."""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn

try:  # numpy is optional; seeded only when present
    import numpy as np
except Exception:  # pragma: no cover
    np = None  # type: ignore[assignment]

from . import source as S
from .runtime import SEED_INPUT, SEED_RUN, TOL64, Outcome, Untestable, _norm, flatten, fmt_exc, projected_loss, rel_diff, seeded
from .context import Ctx
from .module_check import module_check
from .units import combine, plan_units


def check_scale(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    try:
        factor = float(c["factor"])
    except (KeyError, TypeError, ValueError):
        return Outcome("untestable", "scale contract without a numeric factor", None)
    has_expr = bool(c.get("expr_old")) and bool(c.get("expr_new"))
    try:
        units, outcomes = plan_units(ctx)
    except Untestable as u:
        if not has_expr:
            raise
        units, outcomes = [], [Outcome("untestable", str(u), None)]
    results = [module_check(ctx, u, scale=factor) for u in units]
    if results and all(r.verdict != "untestable" for r in results) and not outcomes:
        return combine(results)
    if has_expr:
        return expr_scale_check(ctx, factor)
    return combine(outcomes + results)


def expr_scale_check(ctx: Ctx, factor: float) -> Outcome:
    c = ctx.req.contract
    unit = "<module-level loss expression>"
    opaque = [str(o) for o in (c.get("opaque") or [])]
    try:
        eo = S.substitute_opaque(c["expr_old"], opaque)
        en = S.substitute_opaque(c["expr_new"], opaque)
    except SyntaxError as e:
        return Outcome("untestable", f"the loss expression does not parse: {fmt_exc(e)}", unit)
    ns: dict[str, Any] = {"torch": torch, "nn": nn, "F": torch.nn.functional, "math": math}
    if np is not None:
        ns.update(np=np, numpy=np)
    try:
        mod = ctx.module("old")
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
    except Untestable:
        pass
    free = sorted((eo.free | en.free) - set(ns))
    if free:
        return Outcome(
            "untestable",
            f"the loss expression uses {', '.join(free)}, which is neither opaque nor defined at module level; "
            f"the engine must list it in 'opaque'",
            unit,
        )
    leaves = []
    for i in range(len(opaque)):
        g = torch.Generator().manual_seed(SEED_INPUT + i)
        leaves.append(torch.randn(4, 3, generator=g, dtype=torch.float64).requires_grad_(True))
    if not leaves:
        return Outcome("untestable", "the loss expression has no opaque part to differentiate with respect to", unit)

    def evaluate(e: S.OpaqueExpr, tag: str) -> list:
        env = dict(ns)
        for i, leaf in enumerate(leaves):
            env[f"__gf_leaf{i}"] = leaf.clone()
        with seeded(SEED_RUN):
            val = eval(compile(e.code, f"<expr_{tag}>", "eval"), env)
            loss = projected_loss(flatten(val))
            if loss is None or not loss.requires_grad:
                return [None] * len(leaves)
            return list(torch.autograd.grad(loss, leaves, allow_unused=True))

    try:
        g_old = evaluate(eo, "old")
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"the original loss expression cannot be evaluated on tensors: {fmt_exc(e)}", unit)
    try:
        g_new = evaluate(en, "new")
    except Exception as e:  # noqa: BLE001
        return Outcome("failed", f"the rewritten loss expression raises {fmt_exc(e)}", unit)
    held = ", ".join(f"`{o}`" for o in opaque)
    worst = 0.0
    for a, b in zip(g_old, g_new):
        worst = max(worst, rel_diff(None if a is None else a * factor, b))
    no = math.sqrt(sum(_norm(g) ** 2 for g in g_old if g is not None))
    nn_ = math.sqrt(sum(_norm(g) ** 2 for g in g_new if g is not None))
    if no == 0.0 and nn_ == 0.0:
        return Outcome("failed", "the loss expression has zero gradient in both versions", unit)
    if worst <= TOL64:
        return Outcome(
            "changes-behaviour",
            f"gradients x{factor:g} exactly as the removed factor says, checked on the loss expression with {held} "
            f"held as fp64 tensors (largest norm-relative deviation {worst:.1e}); no hazard shown: the model and "
            f"loss function were not run, so whether the original's updates are lost (below Adam's eps or float32 "
            f"resolution) was not measured (when the loss is computed in an nn.Module the verifier can build, the check "
            f"measures the original's gradients there)",
            unit, direct=True,
        )
    ratio = nn_ / no if no else math.inf
    return Outcome(
        "failed",
        f"gradients of the loss expression change by x{ratio:.3g}, not x{factor:g} as the removed factor says "
        f"(norm-relative deviation {worst:.1e}; {held} held as fp64 tensors)",
        unit,
    )




CHECKS = {"scale": check_scale}
