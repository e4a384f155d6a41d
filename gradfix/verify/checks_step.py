"""Train-step contracts: `clamp-moved` (GF103, k optimizer steps from two starts) and `gains-grad`
(GF104, the term gains autograd's gradient). Picked up by `checks.extra_checks`."""
from __future__ import annotations

import contextlib
import math
from typing import Any

import torch
import torch.nn as nn

from .runtime import (
    FailedCheck,
    SEED_BUILD, SEED_INPUT, SEED_RUN, Outcome, Untestable, _norm, flatten, fmt_exc, is_gpu_error, is_version_error,
    plural, projected_loss, rel_diff, seeded,
)
from .context import Ctx
from .inputs import infer_input
from .call_sites import _short


# --- clamp-moved -----------------------------------------------------------


class _Inputs:
    def __init__(self, spec: tuple):
        self.spec = spec
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        g = torch.Generator().manual_seed(SEED_INPUT + 97 * self.calls)
        out = []
        for x in self.spec:
            if torch.is_tensor(x) and x.is_floating_point():
                out.append(torch.randn(tuple(x.shape), generator=g, dtype=x.dtype))
            elif torch.is_tensor(x):
                hi = int(x.max()) + 1 if x.numel() else 1
                out.append(torch.randint(0, max(hi, 1), tuple(x.shape), generator=g))
            else:
                out.append(x)
        return out[0] if len(out) == 1 else tuple(out)


def _setup_namespace(ctx: Ctx, tag: str, setup: str, model_name: str, _placed: str | None = None,
                     overlay: dict | None = None) -> tuple[dict, nn.Module]:
    """`overlay`: module names to set before the setup runs (their values where the setup stands, call_inputs.py)."""
    try:
        return _setup_namespace_once(ctx, tag, setup, model_name, overlay)
    except NameError as e:
        # `model = Flow(...).to(device)`, `device` set by code the verifier does not run: built without the
        # placement, which the check makes itself (guard_builds.py)
        from .guard_builds import overrides_placement, unplaced_setup

        bare = None if _placed else unplaced_setup(setup, getattr(e, "name", None))
        if bare is None:
            raise
        ns, model = _setup_namespace(ctx, tag, bare[0], model_name, _placed=bare[1], overlay=overlay)
        if overrides_placement(model):
            raise Untestable(f"`{model_name}` is placed by `{bare[1]}`, whose `{e.name}` is set by code the verifier "
                             f"does not run, and {type(model).__name__} overrides the placement methods") from None
        note = (f"`{model_name}` built without its placement `{_short(bare[1], 60)}` (`{e.name}` is set by code the "
                f"verifier does not run; the check places the module on the CPU itself).")
        if note not in ctx.notes:
            ctx.notes.append(note)
        return ns, model


def _setup_namespace_once(ctx: Ctx, tag: str, setup: str, model_name: str, overlay: dict | None = None
                          ) -> tuple[dict, nn.Module]:
    mod = ctx.load_fresh(tag)
    ns = mod.__dict__
    ns.update(overlay or {})
    ns["__gf_loss"] = lambda *outs: projected_loss(flatten(outs))
    with seeded(SEED_BUILD):
        from .held_builds import converted_first, prior_build, reads

        base = converted_first(setup) or model_name  # `model = model.to(DEVICE)` then `net = model`: model's build
        if base not in ns:  # `model = model.to(DEVICE)`: first the file's own build of it (held_builds.py)
            pre = prior_build(ctx.analysis.old_tree, base) if reads(setup, base) else None
            if pre is not None:
                exec(compile(pre, "<setup>", "exec"), ns)
                ns["__gf_prior_build"] = pre
            elif reads(setup, base):  # built in the `__main__` block from its constants (guard_builds.py)
                from .guard_builds import guard_build

                found = guard_build(ctx.analysis.old_tree, base, mod, ctx.req.line)
                if found is not None:
                    pre, values, note = found
                    local = dict(values)
                    exec(compile(pre, "<setup>", "exec"), ns, local)
                    ns[base] = local[base]
                    ns["__gf_prior_build"] = pre
                    if note not in ctx.notes:
                        ctx.notes.append(note)
        from .held_builds import function_build, held_build  # built in __init__ or main() from their names

        held = held_build(ctx.analysis.old_tree, setup, model_name, mod, ctx.req.path, ctx.req.project_root)
        inner = None if held is not None else function_build(ctx.analysis.old_tree, setup, mod)
        if held is None and inner is None:  # a statement of the `__main__` block, reading its constants
            from .guard_builds import guard_setup

            inner = guard_setup(ctx.analysis.old_tree, setup, mod, ctx.req.line)
        if held is None and inner is None:
            exec(compile(setup, "<setup>", "exec"), ns)
        else:
            local = dict(held.values if held is not None else inner[0])  # they shadow module names, as in there
            run = (held.setup or setup) if held is not None else inner[2]
            exec(compile(run, "<setup>", "exec"), ns, local)
            ns[model_name] = local.get(model_name)
            built = ns[model_name]
            if held is not None and held.placed and isinstance(built, nn.Module) and any(
                    getattr(type(built), m, None) is not getattr(nn.Module, m) for m in ("to", "cuda", "cpu")):
                raise Untestable(f"`{model_name}` is built by `{held.placed}` in {held.holder}.__init__, whose device "
                                 f"__init__ fills in, and {type(built).__name__} overrides the placement methods")
            note = (f"`{model_name}` built as {held.holder}.__init__ builds it, with {held.note}." if held is not None
                    else f"`{model_name}` built by `{setup.strip()}` {inner[1]}.")
            if note not in ctx.notes:
                ctx.notes.append(note)
    model = ns.get(model_name)
    if not isinstance(model, nn.Module):
        raise Untestable(f"setup does not bind an nn.Module named '{model_name}'")
    model.to(ctx.dtype)
    return ns, model


def construction_difference(models: dict) -> str | None:
    """What differs between the two freshly built models (same keys assumed; else the copy reports it)."""
    so, sn = models["old"].state_dict(), models["new"].state_dict()
    for k in so:
        if k in sn and torch.is_tensor(so[k]) and torch.is_tensor(sn[k]) and so[k].shape == sn[k].shape:
            d = rel_diff(so[k], sn[k])
            if d > 1e-9:
                return f"{k} differs after construction, norm-relative {d:.1e}"
    return None


def _optimizer_lr(ns: dict) -> float | None:
    lrs = []
    for v in ns.values():
        if isinstance(v, torch.optim.Optimizer):
            for g in v.param_groups:
                lr = g.get("lr")
                if isinstance(lr, (int, float)):
                    lrs.append(float(lr))
                elif torch.is_tensor(lr):
                    lrs.append(float(lr))
    return max(lrs) if lrs else None


def _eval_param(expr: str, ns: dict) -> torch.Tensor:
    try:
        p = eval(expr, ns)
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"the contract's param `{expr}` cannot be evaluated after setup: {fmt_exc(e)}")
    if not torch.is_tensor(p):
        raise Untestable(f"the contract's param `{expr}` is not a tensor")
    return p


class _StepRaised(Exception):
    def __init__(self, tag: str, step: int, error: BaseException):
        super().__init__(str(error))
        self.tag, self.step, self.error = tag, step, error


def check_clamp_moved(ctx: Ctx, k: int = 3) -> Outcome:
    c = ctx.req.contract
    changed = ctx.analysis.changed_functions + ctx.analysis.changed_classes
    unit = c.get("unit") or (", ".join(changed) if changed else f"train step of {c.get('model') or 'model'}")
    missing = [key for key in ("setup", "step_old", "step_new", "param", "bounds") if not c.get(key)]
    if missing:
        return Outcome(
            "untestable",
            f"the rule found no {' / '.join(missing)} for a train-step check (it needs the model and optimizer built "
            f"by plain module-level assignments and one training loop)",
            unit,
        )
    try:
        # a bound is a number, or source text (`-clip`) evaluated against the module's constants
        lo, hi = (float(x) if not isinstance(x, str) else float(eval(x, dict(vars(ctx.module("old")))))
                  for x in c["bounds"])
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"clamp-moved contract has unusable bounds ({fmt_exc(e)})", unit)
    note = ""
    try:
        results, lr_used = _clamp_runs(ctx, c, lo, hi, k, allow_mutation=False)
    except _StepRaised as sr:
        if not (sr.tag == "old" and is_version_error(sr.error)):
            return _step_raised_outcome(sr, unit)
        # The model's forward breaks backward on its own (an in-place op this change does not
        # touch): compare the steps as that code intends them, with mutation of saved tensors allowed.
        try:
            results, lr_used = _clamp_runs(ctx, c, lo, hi, k, allow_mutation=True)
        except _StepRaised as sr2:
            return _step_raised_outcome(sr2, unit)
        note = (
            "; the steps ran with mutation of saved tensors allowed, because the model's forward raises "
            "'modified by an inplace operation' on its own"
        )
    out = _judge_clamp(ctx, c, results, lr_used, lo, hi, k, unit)
    return Outcome(out.verdict, out.detail + note, out.unit)


def _step_raised_outcome(sr: _StepRaised, unit: str) -> Outcome:
    if sr.tag == "old":
        return Outcome("untestable", f"the original train step raises {fmt_exc(sr.error)} (step {sr.step})", unit)
    return Outcome("failed", f"new version raises {fmt_exc(sr.error)} in train step {sr.step}", unit)


def _clamp_runs(ctx: Ctx, c: dict, lo: float, hi: float, k: int, allow_mutation: bool) -> tuple[dict, float]:
    setup, step_old, step_new, param_expr = c["setup"], c["step_old"], c["step_new"], c["param"]
    model_name = c.get("model") or "model"
    bound = max([abs(v) for v in (lo, hi) if math.isfinite(v) and v != 0] or [1.0])  # one-sided clamps
    results: dict[str, dict[str, list]] = {}
    lr_used: float | None = None
    spec: tuple | None = None
    for start in ("a", "b"):
        nss: dict[str, dict] = {}
        models: dict[str, nn.Module] = {}
        for tag in ("old", "new"):
            try:
                nss[tag], models[tag] = _setup_namespace(ctx, tag, setup, model_name)
            except Untestable:
                raise
            except Exception as e:  # noqa: BLE001
                which = "original" if tag == "old" else "rewritten"
                if is_gpu_error(e):
                    raise Untestable(f"needs GPU: setup raises {fmt_exc(e)}")
                raise Untestable(f"setup raises {ctx.explain(e, model_name)} in the {which} module")
        built = construction_difference(models)
        if built:
            raise FailedCheck(f"the setup builds a different {model_name}: {built} (compared under one seed, before "
                              f"any state is copied)")
        try:
            models["new"].load_state_dict(models["old"].state_dict())
        except Exception as e:  # noqa: BLE001
            raise Untestable(f"state mapping needed: {fmt_exc(e)}")
        if lr_used is None:
            hint = c.get("lr_hint")
            lr_used = float(hint) if hint else (_optimizer_lr(nss["old"]) or 1e-3)
        if spec is None:
            spec = infer_input(model_name, [models["old"], models["new"]], ctx.dtype, ctx.explain)
        for tag in ("old", "new"):
            nss[tag]["__gf_input"] = _Inputs(spec)
        if start == "b":
            for tag in ("old", "new"):
                p = _eval_param(param_expr, nss[tag])
                with torch.no_grad():
                    m = float(p.abs().max())
                    if m > 0:
                        p.mul_(2 * bound / m)
        per: dict[str, list] = {"old": [], "new": []}
        for tag, code in (("old", step_old), ("new", step_new)):
            ns = nss[tag]
            p0 = _eval_param(param_expr, ns)
            per[tag].append(
                {
                    "params": {n: q.detach().clone() for n, q in models[tag].named_parameters()},
                    "grads": {},
                    "param": p0.detach().clone(),
                }
            )
            try:
                compiled = compile(code, f"<step_{tag}>", "exec")
            except SyntaxError as e:
                raise Untestable(f"the contract's step_{tag} does not compile: {fmt_exc(e)}")
            for t in range(1, k + 1):
                mut = torch.autograd.graph.allow_mutation_on_saved_tensors() if allow_mutation else contextlib.nullcontext()
                try:
                    with seeded(SEED_RUN + t), mut:
                        exec(compiled, ns)
                except Exception as e:  # noqa: BLE001
                    raise _StepRaised(tag, t, e)
                per[tag].append(
                    {
                        "params": {n: q.detach().clone() for n, q in models[tag].named_parameters()},
                        "grads": {
                            n: (None if q.grad is None else q.grad.detach().clone())
                            for n, q in models[tag].named_parameters()
                        },
                        "param": _eval_param(param_expr, ns).detach().clone(),
                    }
                )
        results[start] = per
    assert lr_used is not None
    return results, lr_used


def _judge_clamp(ctx: Ctx, c: dict, results: dict, lr_used: float, lo: float, hi: float, k: int, unit: str) -> Outcome:
    param_expr = c["param"]
    bound = max([abs(v) for v in (lo, hi) if math.isfinite(v) and v != 0] or [1.0])  # one-sided clamps
    tol = ctx.tol
    slack = 1.1  # decoupled weight decay adds lr*wd*|w| to the documented lr-per-step divergence
    # (a) weights as built: equal while the clamp does not bind
    a = results["a"]
    equal_steps, bound_at, max_a = 0, None, 0.0
    for t in range(1, k + 1):
        before, after = a["old"][t - 1]["param"], a["old"][t]["param"]
        inside = bool((before >= lo).all() and (before <= hi).all() and (after >= lo).all() and (after <= hi).all())
        if not inside:
            bound_at = t
            break
        for n in a["old"][t]["params"]:
            d1 = rel_diff(a["old"][t]["params"][n], a["new"][t]["params"][n])
            d2 = rel_diff(a["old"][t]["grads"].get(n), a["new"][t]["grads"].get(n))
            max_a = max(max_a, d1, d2)
            if d1 > tol or d2 > tol:
                what = "parameter" if d1 >= d2 else "grad of"
                return Outcome(
                    "failed",
                    f"with the weights as built (the clamp does not bind) the rewrite differs from the original at step "
                    f"{t}: {what} {n} norm-relative {max(d1, d2):.1e}",
                    unit,
                )
        equal_steps = t
    # both starts: the rewrite keeps `param` within bounds
    for start, label in (("a", "weights as built"), ("b", f"{param_expr} scaled to |max| {2 * bound:g}")):
        for t in range(1, k + 1):
            p = results[start]["new"][t]["param"]
            if not bool((p >= lo - 1e-12).all() and (p <= hi + 1e-12).all()):
                return Outcome(
                    "failed",
                    f"the rewrite leaves {param_expr} outside [{lo:g}, {hi:g}] after step {t} ({label}): "
                    f"min {float(p.min()):.4g}, max {float(p.max()):.4g}",
                    unit,
                )
    # (b) outside the bounds: at most lr per step away from the original
    b = results["b"]
    max_b, max_b_name = 0.0, ""
    for t in range(1, k + 1):
        for n in b["old"][t]["params"]:
            d = float((b["old"][t]["params"][n] - b["new"][t]["params"][n]).abs().max())
            if d > max_b:
                max_b, max_b_name = d, n
            # other parameters: two runs whose Adam-like steps are each at most lr apart can
            # differ by 2 lr per step once the clamp changed their gradients
            if d > 2 * slack * lr_used * t + 1e-12:
                return Outcome(
                    "failed",
                    f"with {param_expr} outside the bounds, {n} deviates from the original by {d:.2e} after step {t}, "
                    f"more than 2 lr per step ({lr_used:g} x 2 x {t})",
                    unit,
                )
        d = float((b["old"][t]["param"] - b["new"][t]["param"]).abs().max())
        if d > slack * lr_used * t + 1e-12:
            return Outcome(
                "failed",
                f"with {param_expr} outside the bounds, it deviates from the original by {d:.2e} after step {t}, "
                f"more than lr per step ({lr_used:g} x {t})",
                unit,
            )
    bind_txt = f"the clamp first binds at step {bound_at}" if bound_at else "the clamp never binds"
    shown = (f"{k} train steps checked from 2 starts: with the weights as built, grads and params equal for "
             f"{equal_steps} step(s) ({bind_txt}; largest norm-relative difference {max_a:.1e}); with {param_expr} "
             f"scaled to |max| {2 * bound:g}, the rewrite stays within [{lo:g}, {hi:g}] and deviates from the original "
             f"by at most {max_b:.1e} ({max_b_name}; lr {lr_used:g} per step)")
    # The hazard, measured: the original's clamp runs inside the loss, before the optimizer's update,
    # so the parameter it declares bounded leaves the bounds after the step
    outside = []
    for t in range(1, k + 1):
        p = b["old"][t]["param"]
        excess = max(float((p - hi).clamp(min=0).max()), float((lo - p).clamp(min=0).max()))
        if excess > 1e-12:
            outside.append((t, excess))
    if outside:
        t, excess = outside[0]
        return Outcome("fixes-hazard", f"{shown}; the original leaves {param_expr} outside [{lo:g}, {hi:g}] after "
                       f"{plural(len(outside), 'step')} of {k} (by {excess:.2e} after step {t}): its clamp, a write in "
                       f"the loss that autograd does not see, runs before the optimizer's update, which moves the "
                       f"parameter out again", unit)
    return Outcome("changes-behaviour", f"{shown}; no hazard shown: the original also keeps {param_expr} within "
                   f"the bounds after every step", unit)


# --- gains-grad ------------------------------------------------------------


def check_gains_grad(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    unit = c.get("unit") or ", ".join(ctx.analysis.changed_functions + ctx.analysis.changed_classes) or None
    if not c.get("call") and c.get("call_old") and c.get("call_new"):
        c = dict(c, call=c["call_new"])  # an inline term: its old and new source are given separately
    missing = [key for key in ("setup", "call", "model") if not c.get(key)]
    if missing:
        return Outcome(
            "untestable",
            f"the rule found no {' / '.join(missing)} for the term: it needs the model built by a plain module-level "
            f"assignment and the term's call in the training loop",
            unit,
        )
    setup, call, model_name = c["setup"], c["call"], c["model"]
    unit = unit or ("<module-level loss term>" if c.get("call_old") else call)
    nss: dict[str, dict] = {}
    models: dict[str, nn.Module] = {}
    for tag in ("old", "new"):
        try:
            nss[tag], models[tag] = _setup_namespace(ctx, tag, setup, model_name)
        except Untestable:
            raise
        except Exception as e:  # noqa: BLE001
            return Outcome("untestable", f"setup raises {ctx.explain(e, model_name)}", unit)
    built = construction_difference(models)
    if built:
        return Outcome("failed", f"the setup builds a different {model_name}: {built} (compared under one seed, "
                       f"before any state is copied)", unit)
    try:
        models["new"].load_state_dict(models["old"].state_dict())
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"state mapping needed: {fmt_exc(e)}", unit)
    try:
        codes = {
            "old": compile(c.get("call_old") or call, "<call_old>", "eval"),
            "new": compile(c.get("call_new") or call, "<call_new>", "eval"),
        }
    except SyntaxError as e:
        return Outcome("untestable", f"the contract's term does not compile: {fmt_exc(e)}", unit)
    named = {tag: [(n, p) for n, p in models[tag].named_parameters() if p.requires_grad] for tag in nss}

    def term(tag: str) -> Any:
        with seeded(SEED_RUN):
            return eval(codes[tag], nss[tag])

    try:
        t_old = term("old")
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"the original term raises {fmt_exc(e)}", unit)
    try:
        t_new = term("new")
    except Exception as e:  # noqa: BLE001
        return Outcome("failed", f"new version raises {fmt_exc(e)} when evaluating {call}", unit)
    vo, vn = flatten(t_old), flatten(t_new)
    dv = max((rel_diff(a, b) for a, b in zip(vo, vn)), default=0.0) if len(vo) == len(vn) else math.inf
    if dv > ctx.tol:
        return Outcome("failed", f"the value of {call} changes: norm-relative {dv:.1e}", unit)
    lo = projected_loss(vo)
    if lo is not None and lo.requires_grad:
        g_old = torch.autograd.grad(lo, [p for _, p in named["old"]], allow_unused=True)
        nz = [n for (n, _), g in zip(named["old"], g_old) if g is not None and _norm(g) > 0]
        if nz:
            return Outcome("failed", f"the original term already has gradient for {', '.join(nz[:3])}", unit)
    ln = projected_loss(vn)
    if ln is None or not ln.requires_grad:
        return Outcome("failed", f"the rewritten term still carries no gradient to {model_name}'s parameters", unit)
    g_new = torch.autograd.grad(ln, [p for _, p in named["new"]], allow_unused=True)
    got = [n for (n, _), g in zip(named["new"], g_new) if g is not None and _norm(g) > 0]
    if not got:
        return Outcome("failed", f"the rewritten term's gradient is zero for every parameter of {model_name}", unit)
    # Sanity: the same gradient through .backward() into .grad as autograd.grad reports.
    for _, p in named["new"]:
        p.grad = None
    projected_loss(flatten(term("new"))).backward()  # type: ignore[union-attr]
    worst = 0.0
    for (n, p), g in zip(named["new"], g_new):
        worst = max(worst, rel_diff(g, p.grad))
    if worst > ctx.tol:
        return Outcome("failed", f"backward() and autograd.grad disagree on the new term (norm-relative {worst:.1e})", unit)
    value = ""
    if vo and torch.is_tensor(vo[0]) and vo[0].numel() == 1:
        value = f" ({float(vo[0]):.4g} in both)"
    return Outcome(
        "fixes-hazard",
        f"the original term gives no gradient to {model_name}'s parameters (None or zero for all of them, the "
        f"optimizer's parameters get nothing from it); the term now contributes gradient to {', '.join(got[:4])}{' and more' if len(got) > 4 else ''}; its value is "
        f"unchanged{value}",
        unit, direct=bool(c.get("call_old")),
    )




CHECKS = {"clamp-moved": check_clamp_moved, "gains-grad": check_gains_grad}
