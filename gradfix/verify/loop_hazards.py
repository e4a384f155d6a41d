"""What two training-loop traces show (checks_loop.py runs them): where they first differ, the series that say
how, and the hazards the original's own trace shows that the rewrite's does not: steps that see no gradient, an lr
off the declared schedule, declared clipping or clamps not in effect, a freeze that does not freeze."""

from __future__ import annotations

import math

import torch

from .loop_build import EPOCHS, unjson
from .runtime import Untestable, rel_diff

TOL = 1e-9


# --------------------------------------------------------------------------- comparing


def first_difference(a, b) -> tuple[str, int] | None:
    """(quantity, step) of the first difference: lr, grads, params, steps or totals."""
    if len(a.steps) != len(b.steps):
        return "steps", min(len(a.steps), len(b.steps))
    for i, (x, y) in enumerate(zip(a.steps, b.steps)):
        if any(abs(p - q) > 1e-12 * max(abs(p), abs(q), 1e-300) for p, q in zip(x["lr"], y["lr"])):
            return "lr", i
        if any(rel_diff(p, q) > TOL for p, q in zip(x["grads"], y["grads"])):
            return "grads", i
        if any(rel_diff(p, q) > TOL for p, q in zip(x["params"], y["params"])):
            return "params", i
    if len(a.totals) != len(b.totals):
        return "totals", 0
    for i, (p, q) in enumerate(zip(a.totals, b.totals)):
        if abs(p - q) > TOL * max(abs(p), abs(q), 1e-300):
            return "totals", i
    if len(a.opt_state) != len(b.opt_state) or any(rel_diff(p, q) > TOL for p, q in zip(a.opt_state, b.opt_state)):
        return "opt_state", 0
    return None


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _series(t, what: str) -> str:
    if what == "lr":
        vals = [_fmt(s["lr"][0]) for s in t.steps]
    elif what == "grads":
        vals = []
        for s in t.steps:
            gs = [g for g in s["grads"] if g is not None]
            vals.append("None" if not gs else _fmt(float(torch.sqrt(sum((g ** 2).sum() for g in gs)))))
    elif what in ("params", "steps"):
        vals = [_fmt(float(torch.sqrt(sum(((p - q) ** 2).sum() for p, q in zip(s["params"], s["before"])))))
                for s in t.steps]
    elif what == "opt_state":
        vals = [_fmt(float(v.to(torch.float64).norm())) for v in t.opt_state]
    else:
        vals = [_fmt(v) for v in t.totals]
    return ", ".join(vals) if vals else "(none)"


_WHAT = {"lr": "lr per step", "grads": "gradient norm seen by each step", "params": "update norm per step",
         "steps": "update norm per step", "totals": "accumulated loss per epoch",
         "opt_state": "optimizer state norms after the run"}


def _contrast(a, b, what: str, la: str, lb: str) -> str:
    text = f"{_WHAT[what]}: {la} {_series(a, what)}; {lb} {_series(b, what)}"
    if what == "steps":
        text = f"{la} takes {len(a.steps)} optimizer steps, {lb} {len(b.steps)}; " + text
    return text


# --------------------------------------------------------------------------- hazards


def _gnorm(grads: list) -> float | None:
    gs = [g for g in grads if g is not None]
    if not gs:
        return None
    return float(torch.sqrt(sum((g.to(torch.float64) ** 2).sum() for g in gs)))


def _gmax(ts: list) -> float:
    return max((float(t.abs().max()) for t in ts if t is not None and t.numel()), default=0.0)


def _bounds(e: dict) -> tuple[float, float] | None:
    args = [unjson(a) for a in (e.get("args") or [])]
    kwargs = {k: unjson(v) for k, v in (e.get("kwargs") or {}).items()}
    lo = args[0] if args else kwargs.get("min")
    hi = args[1] if len(args) > 1 else kwargs.get("max")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        return float(lo), float(hi)
    return None


def loop_hazards(sk: dict, t_old, t_new, setup, sched_spec: dict) -> list[str]:
    """The hazards the original's own trace shows and the rewrite's does not (measured, per step)."""
    out: list[str] = []
    # 1. steps that see no gradient: None or all zero, where the rewrite's step sees one
    dead = [i for i, (a, b) in enumerate(zip(t_old.steps, t_new.steps))
            if not _gnorm(a["grads"]) and _gnorm(b["grads"])]
    if dead:
        out.append(f"{len(dead)} of {len(t_old.steps)} optimizer steps see None or zero gradients (first: step "
                   f"{dead[0] + 1}), so the parameters the optimizer holds get no update from them")
    # 2. the learning rate does not follow the declared schedule (the rewrite's trace is the canonical one)
    lr_old, lr_new = [s["lr"][0] for s in t_old.steps], [s["lr"][0] for s in t_new.steps]
    if sched_spec and len(lr_old) == len(lr_new) and any(
            abs(a - b) > 1e-12 * max(abs(a), abs(b), 1e-300) for a, b in zip(lr_old, lr_new)):
        per = " per-epoch" if sched_spec.get("kind") == "epoch" else ""
        out.append(f"the learning rate does not follow the declared{per} schedule ({setup.sched_desc}) over the "
                   f"{EPOCHS} epochs: lr per step {', '.join(_fmt(x) for x in lr_old)} where the schedule gives "
                   f"{', '.join(_fmt(x) for x in lr_new)}")
    # 3. declared clipping that the optimizer step does not see
    for e in sk["batch"]:
        if e["op"] != "clip":
            continue
        v = setup.clip_value(e)
        if v is None or not math.isfinite(v):
            continue
        measure = _gnorm if e["fn"] == "norm" else _gmax
        for i, (a, b) in enumerate(zip(t_old.steps, t_new.steps)):
            mo, mn = measure(a["grads"]) or 0.0, measure(b["grads"]) or 0.0
            if abs(mn - v) <= 1e-6 * v and abs(mo - v) > 1e-3 * v:
                what = "norm" if e["fn"] == "norm" else "largest |value|"
                out.append(f"the declared clipping ({what} {v:g}) is not what the optimizer step sees: gradient "
                           f"{what} {mo:.4g} at step {i + 1} where the clipped gradient has {mn:.4g}")
                break
        break
    # 4. declared bounds on gradients or parameters (`clamp`) that do not hold at the step
    for e in sk["batch"]:
        if e["op"] != "grad_op" or e.get("method") not in ("clamp", "clip"):
            continue
        bounds = _bounds(e)
        if bounds is None and e.get("args") is None:
            try:  # arguments from the file's constants or the helper's call, as the run used them
                args, kwargs = setup.op_args(e)
                bounds = _bounds(dict(e, args=args, kwargs=kwargs))
            except Untestable:
                bounds = None
        if bounds is None:
            continue
        lo, hi = bounds
        key = "grads" if e.get("target") == "grad" else "params"
        for i, (a, b) in enumerate(zip(t_old.steps, t_new.steps)):
            def excess(ts):
                return max((max(float((t - hi).clamp(min=0).max()), float((lo - t).clamp(min=0).max()))
                            for t in ts if t is not None and t.numel()), default=0.0)
            if excess(a[key]) > 1e-12 and excess(b[key]) <= 1e-12:
                what = "gradients the step sees" if key == "grads" else "parameters after the step"
                out.append(f"the declared clamp to [{lo:g}, {hi:g}] has no effect: the {what} exceed it by "
                           f"{excess(a[key]):.3g} at step {i + 1} (the op's result is discarded)")
                break
    # 5. a freeze that does not freeze: the weight still trains
    fr = sk.get("freeze")
    if fr and fr.get("value") is False and t_old.steps and t_new.steps:
        moved_old = any(rel_diff(s["params"][0], s["before"][0]) > 0 for s in t_old.steps)
        moved_new = any(rel_diff(s["params"][0], s["before"][0]) > 0 for s in t_new.steps)
        if moved_old and not moved_new:
            out.append(f"`{fr['attr']} = False` does not freeze the weight: torch never reads `{fr['attr']}`, and the "
                       f"weight still changes at every step")
    return out
