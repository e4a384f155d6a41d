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
from . import changes as CH
from .runtime import (
    SEED_INPUT, SEED_RUN, TOL64, FailedCheck, Outcome, Untestable, _norm, cuda_redirect, flatten, fmt_exc, is_gpu_error,
    plural, projected_loss, rel_diff, seeded,
)
from .context import Ctx
from .module_check import module_check
from .units import combine, plan_units
from .hazards import update_hazard
from .inputs import infer_input
from . import script_loop as SL


def check_scale(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    try:
        factor = float(c["factor"])
    except (KeyError, TypeError, ValueError):
        return Outcome("untestable", "scale contract without a numeric factor", None)
    has_expr = bool(c.get("expr_old")) and bool(c.get("expr_new"))
    a = ctx.analysis
    script_why = None
    if a.module_code_changed and not (a.changed_classes or a.changed_functions or a.changed_constants or a.only_in_one):
        # the loss is in a script's (or notebook's) training loop: run the loop's step as the script does
        out = script_scale_check(ctx, factor)
        if out.verdict != "untestable" or not has_expr:
            return out
        script_why = out.detail
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
        return expr_scale_check(ctx, factor, script_why)
    return combine(outcomes + results)


def expr_scale_check(ctx: Ctx, factor: float, script_why: str | None = None) -> Outcome:
    c = ctx.req.contract
    unit = "<module-level loss expression>"
    opaque = [str(o) for o in (c.get("opaque") or [])]
    try:
        eo = CH.substitute_opaque(c["expr_old"], opaque)
        en = CH.substitute_opaque(c["expr_new"], opaque)
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

    def evaluate(e: CH.OpaqueExpr, tag: str) -> list:
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
            f"measures the original's gradients there)"
            + (f"; the script's training loop could not be run: {script_why}" if script_why else ""),
            unit, direct=True,
        )
    ratio = nn_ / no if no else math.inf
    return Outcome(
        "failed",
        f"gradients of the loss expression change by x{ratio:.3g}, not x{factor:g} as the removed factor says "
        f"(norm-relative deviation {worst:.1e}; {held} held as fp64 tensors)",
        unit,
    )



# --------------------------------------------------------------------------- a script's training loop

SCRIPT_UNIT = "<module-level training loop>"


def _map_line(old_src: str, new_src: str, line: int) -> int | None:
    import difflib

    a, b = old_src.splitlines(), new_src.splitlines()
    for i1, j1, n in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        if i1 < line <= i1 + n:
            return j1 + (line - i1)
    return None


def script_scale_check(ctx: Ctx, factor: float) -> Outcome:
    """GF201 in module-level code: one iteration of the script's loop, on the model, loss function and
    optimizer the file itself builds, with a synthetic batch; the gradients after backward() must be
    x factor in the rewrite, and the original's must show the hazard for `fixes-hazard`."""
    req, a = ctx.req, ctx.analysis
    trees = {"old": a.old_tree, "new": a.new_tree}
    steps: dict[str, SL.Step] = {}
    try:
        kept = {t: {id(x) for part in S.classify_module(trees[t])[:2] for x in part} for t in trees}
        steps["old"] = SL.extract(trees["old"], req.line, kept["old"])
        new_line = _map_line(req.original, req.rewritten, steps["old"].loop.lineno)
        if new_line is None:
            return Outcome("failed", f"the rewrite changes the loop header at line {steps['old'].loop.lineno}", SCRIPT_UNIT)
        steps["new"] = SL.extract(trees["new"], new_line, kept["new"])
    except Untestable as u:
        return Outcome("untestable", str(u), SCRIPT_UNIT)
    changed = dict(zip(("old", "new"), SL.changed_lines(req.original, req.rewritten)))
    for tag in ("old", "new"):
        outside = sorted(changed[tag] - steps[tag].lines)
        if outside:
            which = "original" if tag == "old" else "rewrite"
            return Outcome("untestable", f"line {outside[0]} of the {which} changed but is not part of the training "
                           f"step (the statements leading to backward() and the optimizer's step) the verifier runs",
                           SCRIPT_UNIT)
    with cuda_redirect(ctx.redirect):
        try:
            return _script_runs(ctx, steps, factor)
        except Untestable as u:
            return Outcome("untestable", str(u), SCRIPT_UNIT)
        except FailedCheck as f:
            return Outcome("failed", str(f), SCRIPT_UNIT)


def _prepare(ctx: Ctx, steps: dict) -> tuple[dict, dict]:
    """Both versions loaded and set up; the rewrite's model holds the original's state."""
    nss, models = {}, {}
    for tag in ("old", "new"):
        ns = vars(ctx.load_fresh(tag))
        try:
            SL.build(ns, steps[tag])
        except Untestable as u:
            if tag == "new":
                raise FailedCheck(f"the rewrite's setup fails where the original's runs: {u}")
            raise
        nss[tag] = ns
    for name, _leaves in steps["old"].model_calls:
        m = SL.module_of(nss["old"], name)
        if m is not None and any(True for _ in m.parameters()):
            models = {t: SL.module_of(nss[t], name) for t in nss}
            break
    if not models or models["new"] is None:
        called = ", ".join(dict.fromkeys(n for n, _ in steps["old"].model_calls))
        raise Untestable(f"the loop calls {called} on the batch, but the setup binds no nn.Module with parameters "
                         f"under that name")
    from .checks_step import construction_difference

    built = construction_difference(models)
    if built:
        raise FailedCheck(f"the setup builds a different model: {built}")
    try:
        models["new"].load_state_dict(models["old"].state_dict())
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"state mapping needed: {fmt_exc(e)}")
    return nss, models


def _run_step(ns: dict, step: SL.Step, model: nn.Module, batch: Any) -> tuple[dict, dict]:
    SL.bind_batch(ns, step, batch)
    with seeded(SEED_RUN):
        exec(SL.compile_block(step.before, "<loop step>"), ns)
        grads = SL.grads_of(model)
        scaler = ns.get(step.scaler) if step.scaler else None
        if hasattr(scaler, "get_scale") and getattr(scaler, "is_enabled", lambda: False)():
            # `scaler.scale(loss).backward()`: the optimizer sees these divided by the scale
            s = float(scaler.get_scale())
            grads = {n: (None if g is None else g / s) for n, g in grads.items()}
        exec(SL.compile_block(step.after, "<loop step>"), ns)
    return grads, SL.params_of(model)


def _script_runs(ctx: Ctx, steps: dict, factor: float) -> Outcome:
    step = steps["old"]
    nss, models = _prepare(ctx, steps)
    name = next(n for n, _ in step.model_calls if SL.module_of(nss["old"], n) is models["old"])
    arg_leaves = next(l for n, l in step.model_calls if n == name)
    if step.structure is None:  # the loop makes its own batch
        inputs, targets, cands = (), [], [("", None)]
    else:
        inputs = infer_input(name, [models["old"], models["new"]], ctx.dtype, ctx.explain)
        if len(inputs) != len(arg_leaves):
            raise Untestable(f"{name} is called with {len(arg_leaves)} argument(s) from the batch, but its forward "
                             f"takes {len(inputs)}")
        probe = copy_module(models["old"])
        with torch.no_grad(), seeded(SEED_RUN):
            out = flatten(probe(*[x.clone() for x in inputs]))
        out = next((o for o in out if torch.is_tensor(o) and o.is_floating_point()), None)
        targets = [p for p in step.leaves if p not in arg_leaves]
        cands = SL.target_candidates(out, ctx.dtype) if (targets and out is not None) else [("no targets", None)]
    tried = []
    for desc, tgt in cands:
        values = {p: x for p, x in zip(arg_leaves, inputs)}
        values.update({p: tgt for p in targets})
        if tried:
            nss, models = _prepare(ctx, steps)
        p0 = SL.params_of(models["old"])
        try:
            g_old, p_old = _run_step(nss["old"], step, models["old"], SL.assemble(step.structure, SL.fresh(values)))
        except Exception as e:  # noqa: BLE001 - user code
            if is_gpu_error(e):
                raise Untestable(f"needs GPU: the original's training step raises {fmt_exc(e)}")
            tried.append(f"{desc}: {fmt_exc(e, 120)}")
            continue
        try:
            g_new, p_new = _run_step(nss["new"], steps["new"], models["new"],
                                     SL.assemble(step.structure, SL.fresh(values)))
        except Exception as e:  # noqa: BLE001
            return Outcome("failed", f"the rewrite's training step raises {fmt_exc(e)}, while the original's runs",
                           SCRIPT_UNIT)
        shapes = ", ".join(str(tuple(x.shape)) for x in inputs if torch.is_tensor(x))
        opt = nss["old"].get(step.optimizer)
        data = ("on the batch the loop body makes itself" if step.structure is None else
                f"on a synthetic batch (input {shapes} inferred from {name}'s first layer"
                f"{'; ' + desc if targets else ''}; the data loader is not run)")
        where = (f"one iteration of the module-level loop at line {step.loop.lineno}, run as the script runs it: "
                 f"`{name}` ({type(models['old']).__name__}) and `{step.optimizer}` ({type(opt).__name__}) built by "
                 f"{step.describe_setup()}, {data}")
        loss = nss["old"].get(step.loss) if step.loss else None
        loss_dtype = loss.dtype if torch.is_tensor(loss) else ctx.dtype
        return _judge(ctx, where, factor, g_old, g_new, p0, p_old, p_new, nss["old"].get(step.optimizer), loss_dtype)
    if step.structure is None:
        raise Untestable(f"the original's training step raises {tried[0].lstrip(': ')}")
    raise Untestable(f"the original's training step raises on every synthetic batch tried ({'; '.join(tried)})")


def copy_module(m: nn.Module) -> nn.Module:
    import copy

    try:
        return copy.deepcopy(m)
    except Exception:  # noqa: BLE001
        return m


def _judge(ctx: Ctx, where: str, factor: float, g_old: dict, g_new: dict, p0: dict, p_old: dict, p_new: dict,
           opt: Any, loss_dtype: torch.dtype) -> Outcome:
    names = [n for n in g_old if g_old[n] is not None or g_new.get(n) is not None]
    for n in names:
        if g_old[n] is None or g_new.get(n) is None:
            which = "original" if g_old[n] is None else "rewrite"
            return Outcome("failed", f"{where}: {n} gets no gradient in the {which} only", SCRIPT_UNIT)
    no = math.sqrt(sum(_norm(g_old[n]) ** 2 for n in names))
    nn_ = math.sqrt(sum(_norm(g_new[n]) ** 2 for n in names))
    if no == 0.0 and nn_ == 0.0:
        return Outcome("failed", f"{where}: no gradient reaches the model's parameters in either version", SCRIPT_UNIT)
    # The gradients must be proportional (to the check's precision) with the removed factor as the ratio, to
    # the precision of the loss itself: a loss the script computes in float32 (`targets.float()`) rounds
    # the factor's reciprocal to float32 (relative 3e-8 for 1e9).
    dot = sum(float((g_old[n].to(torch.float64) * g_new[n].to(torch.float64)).sum()) for n in names)
    fit = dot / (no * no) if no else math.inf
    worst = max((rel_diff(g_old[n] * fit, g_new[n]) for n in names), default=0.0) if math.isfinite(fit) else math.inf
    ftol = max(ctx.tol, 4 * torch.finfo(loss_dtype).eps) if loss_dtype.is_floating_point else ctx.tol
    off = abs(fit / factor - 1.0) if math.isfinite(fit) else math.inf
    prec = "fp64" if ctx.dtype == torch.float64 else "fp32"
    if worst > ctx.tol or off > ftol:
        return Outcome("failed", f"{where}: gradients change by x{fit:.6g}, not x{factor:g} as the removed factor "
                       f"says (norm-relative deviation from proportional {worst:.1e}, {prec})", SCRIPT_UNIT)
    loss_note = "" if ftol == ctx.tol else f", the factor to {off:.1e} (the loss is {str(loss_dtype).replace('torch.', '')})"
    shown = (f"{where}: gradients x{factor:g} as the removed factor says ({prec}, {plural(len(names), 'parameter')}; "
             f"proportional to {worst:.1e}{loss_note})")
    moved = [math.sqrt(sum(_norm(p[n] - p0[n]) ** 2 for n in p0)) for p in (p_old, p_new)]
    opt_txt = ""
    if isinstance(opt, torch.optim.Optimizer):
        lr = opt.param_groups[0].get("lr")
        opt_txt = (f"; the script's {type(opt).__name__} step (lr {float(lr):g}) moved the weights by {moved[0]:.1e} in "
                   f"the original and {moved[1]:.1e} in the rewrite")
    hazard = update_hazard([g_old[n] for n in names], [p0[n] for n in names])
    if hazard is not None:
        return Outcome("fixes-hazard", f"{shown}; {hazard}, and the rewrite's are x{factor:g} larger{opt_txt}",
                       SCRIPT_UNIT)
    rms = math.sqrt(sum(float(g_old[n].pow(2).sum()) for n in names) / max(1, sum(g_old[n].numel() for n in names)))
    return Outcome("changes-behaviour", f"{shown}; no hazard shown: the original's gradients (rms {rms:.1e}) are "
                   f"large enough for Adam (above eps) and for float32 updates, so removing the factor changes the "
                   f"training, e.g. a sum-to-mean normalisation{opt_txt}", SCRIPT_UNIT)


CHECKS = {"scale": check_scale}
