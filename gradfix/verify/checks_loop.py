"""The `train-loop` contract: loop-order rewrites checked on a tiny synthetic training run.

Used by GF202-GF210. The rule says where the training iteration is (its scope and
ordinal) and what the file builds (optimizer, scheduler, GradScaler, each as literal
constructor arguments). The check re-reads the iteration of BOTH versions of the file
with gradfix.analysis.iteration (so it checks the code that was written, not the rule's
idea of it) and renders each as a loop over 2 epochs x 3 batches on a seeded
`nn.Linear(4, 2)` with a synthetic regression batch, in float64:

    zero_grad / forward+loss / backward (scaled) / unscale_ / clip / step (scaled) /
    scaler.update / scheduler.step (per batch, at epoch start or end) / loss accumulation /
    gradient ops (`p.grad.clamp_`) / a `requires_grad` write before training

At every optimizer step it records the learning rates, the gradients the step sees and
the parameters after it, and per epoch the accumulated loss. A third run renders the
canonical order of the original's operations (forward -> backward -> [unscale] -> clip
-> step -> update -> scheduler (per epoch for epoch-based schedulers) -> zero_grad,
which is zero_grad -> forward ... of the next iteration). Verdicts:

- equivalent: original and rewrite traces agree (norm-relative 1e-9);
- fixes-hazard: the rewrite's trace equals the canonical one, the original's does not, and the
  original's own trace shows a hazard (loop_hazards.py: steps with None/zero gradients, an lr trace
  off the declared schedule, declared clipping or clamps not in effect, a freeze that does not freeze);
- changes-behaviour: the same without a hazard shown;
- failed: anything else; untestable: the iteration cannot be rendered (with why).

It checks the order of the loop's operations on a synthetic model, not the user's model,
and the detail says so and what it substituted.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn

from .context import Ctx
from .loop_build import BATCHES, EPOCHS, build_optimizer, build_scheduler, eval_src, unjson
from .loop_skeleton import Raised, canonical, describe, read_skeletons
from .loop_hazards import _contrast, _series, first_difference, loop_hazards
from .runtime import Outcome, Untestable, fmt_exc, seeded
UNIT = "training loop (synthetic nn.Linear(4, 2), 2 epochs x 3 batches)"
SYNTHETIC = (f"Checked on a seeded nn.Linear(4, 2) trained {EPOCHS} epochs x {BATCHES} batches, running the loop's "
             f"operations as each version orders them: this checks the loop's operations, not the user's model")


# --------------------------------------------------------------------------- running


class Trace:
    def __init__(self):
        self.steps: list[dict] = []
        self.totals: list[float] = []   # per epoch, per accumulation statement
        self.graphs: list[bool] = []    # whether that total held the autograd graph
        self.opt_state: list = []       # the optimizer's state tensors after the run (momenta, Adam moments)


def _data():
    g = torch.Generator().manual_seed(1234)
    xs = [[torch.randn(8, 4, generator=g, dtype=torch.float64) for _ in range(BATCHES)] for _ in range(EPOCHS)]
    ys = [[torch.randn(8, 2, generator=g, dtype=torch.float64) for _ in range(BATCHES)] for _ in range(EPOCHS)]
    return xs, ys


def _base_model():
    with seeded(0):
        return nn.Linear(4, 2).to(torch.float64)


# How a condition the check cannot read is rendered. A condition on data (`if loss < best:`) or a period that is
# not a literal (`if (i + 1) % accum == 0:`) may hold on any batches; each is rendered three ways (all such
# conditions of the loop alike), and a verdict is given only when the three agree (check_train_loop).
MODES = ("always", "second", "last")
_OPAQUE = {"always": "on every batch", "second": "on the second batch of each epoch only",
           "last": "on the last batch of each epoch only"}
_PERIOD = {"always": 1, "second": 2, "last": BATCHES}  # with offset 1: every batch, the second only, the last only


def _cond_true(cond, bi: int, notes: list[str], mode: str = "always") -> bool:
    if not cond:
        return True
    if "all" in cond:
        return all(_cond_true(c, bi, notes, mode) for c in cond["all"])
    if "every" in cond:
        k = cond.get("every")
        if not k:
            k = _PERIOD[mode]
            note = f"`{cond.get('every_src')}` in the accumulation condition is not a literal: {k} stands in for it"
            if note not in notes:
                notes.append(note)
        return (bi + int(cond.get("offset") or 0)) % int(k) == 0
    note = f"the condition `{cond.get('opaque')}` is taken as true {_OPAQUE[mode]}"
    if note not in notes:
        notes.append(note)
    return mode == "always" or (mode == "second" and bi == 1) or (mode == "last" and bi == BATCHES - 1)


def free_conditions(*sks: dict) -> list[str]:
    """The conditions of the iterations' events that the check cannot read (opaque, or a period not a literal)."""
    out: list[str] = []

    def walk(cond) -> None:
        if not cond:
            return
        if "all" in cond:
            for x in cond["all"]:
                walk(x)
        elif "every" in cond:
            if not cond.get("every") and f"`{cond.get('every_src')}`" not in out:
                out.append(f"`{cond.get('every_src')}`")
        elif f"`{cond.get('opaque')}`" not in out:
            out.append(f"`{cond.get('opaque')}`")

    for sk in sks:
        for e in sk["batch"]:
            walk(e.get("cond"))
    return out


class Setup:
    def __init__(self, c: dict, sk_old: dict, mode: str = "always"):
        self.c = c
        self.mode = mode  # how conditions the check cannot read are rendered (MODES)
        self.xs, self.ys = _data()
        self.base = _base_model()
        self.notes: list[str] = []
        self.loss_scale = 1.0
        self.scaler_desc = ""
        scaler = c.get("scaler")
        self.scaler_on = bool(scaler) and scaler.get("enabled") is not False
        if scaler and scaler.get("enabled") is None:
            why = "enabled= is not a literal" if scaler.get("built") else "GradScaler is not constructed in the file"
            self.notes.append(f"`{scaler.get('name')}`: {why}, so the scaler is rendered enabled")
        self._pick_loss_scale(sk_old)

    def _pick_loss_scale(self, sk: dict) -> None:
        clips = [e for e in sk["batch"] if e["op"] == "clip"]
        for e in sk["batch"]:
            # a gradient clamp binds like a value clip
            if e["op"] == "grad_op" and e.get("target") == "grad" and e.get("method") in ("clamp", "clip"):
                try:
                    args = e["args"] if e.get("args") is not None else self.op_args(e)[0]
                except Untestable:
                    continue
                bounds = [abs(float(unjson(a))) for a in args if isinstance(unjson(a), (int, float))]
                bounds = [b for b in bounds if b > 0 and not math.isinf(b)]
                if bounds:
                    clips.append({"op": "clip", "fn": "value", "value": max(bounds)})
        if not clips:
            return
        m = copy.deepcopy(self.base)
        loss = ((m(self.xs[0][0]) - self.ys[0][0]) ** 2).mean()
        loss.backward()
        g_norm = float(torch.sqrt(sum((p.grad ** 2).sum() for p in m.parameters())))
        g_max = max(float(p.grad.abs().max()) for p in m.parameters())
        scale = 1.0
        for e in clips:
            v = self.clip_value(e)
            if v is None or math.isinf(v):
                continue
            ref = g_norm if e["fn"] == "norm" else g_max
            if ref > 0:
                scale = max(scale, 10.0 * v / ref)
        if scale > 1.0:
            self.loss_scale = float(f"{scale:.3g}")
            self.notes.append(f"the synthetic loss is scaled x{self.loss_scale:g} so that the clipping binds")

    def clip_value(self, e: dict):
        v = e.get("value")
        if isinstance(v, dict):
            v = unjson(v)
        if v is None:
            ok, v = eval_src(e.get("value_src"), self.c.get("env") or {})
            if ok and isinstance(v, (int, float)):
                return float(v)
            note = f"the clip threshold `{e.get('value_src')}` is not a literal: 0.05 stands in for it"
            if note not in self.notes:
                self.notes.append(note)
            return 0.05
        return float(v)

    def run(self, sk: dict, tag: str, notes: list[str]) -> Trace:
        model = copy.deepcopy(self.base)
        params = list(model.parameters())
        fr = sk.get("freeze")
        if fr:
            setattr(model.weight, fr["attr"], fr["value"])
            note = (f"the line's attribute write is applied to the synthetic model's weight before training "
                    f"(`{fr['attr']} = {fr['value']}` in this version)")
            if tag == "old" and note not in notes:
                notes.append(note)
        opt, self.opt_desc = build_optimizer(self.c.get("optimizer"), params, notes)
        spec = self.c.get("scheduler")
        uses_sched = any(e["op"] == "sched" for e in sk["batch"] + sk.get("epoch_start", []) + sk.get("epoch_end", []))
        sched, self.sched_desc = build_scheduler(spec if spec else ({} if uses_sched else None), opt, notes) \
            if (spec or uses_sched) else (None, "no scheduler")
        scaler = torch.amp.GradScaler("cpu", enabled=self.scaler_on) if self._uses_scaler(sk) else None
        if scaler is not None:
            self.scaler_desc = f"GradScaler('cpu', enabled={self.scaler_on})"
        trace = Trace()
        state = {"loss": None, "totals": {}}
        acc_ids = {id(e): i for i, e in enumerate(x for x in sk["batch"] if x["op"] == "accumulate")}

        def do(e: dict, bi: int, ep: int) -> None:
            op = e["op"]
            if op == "zero_grad":
                stn = e.get("set_to_none")
                stn = True if stn is None else bool(stn)
                if e.get("target") == "none":
                    for p in params:
                        p.grad = None
                elif e.get("target") == "model":
                    model.zero_grad(set_to_none=stn)
                else:
                    opt.zero_grad(set_to_none=stn)
            elif op == "forward":
                if state["loss"] is None:
                    x, y = self.xs[ep][bi], self.ys[ep][bi]
                    state["loss"] = self.loss_scale * ((model(x) - y) ** 2).mean()
            elif op == "backward":
                if state["loss"] is None:
                    do({"op": "forward"}, bi, ep)
                    note = "no model call is visible in the iteration: the forward pass is rendered right before backward"
                    if note not in notes:
                        notes.append(note)
                if e.get("scaled") and scaler is not None:
                    scaler.scale(state["loss"]).backward()
                else:
                    state["loss"].backward()
            elif op == "unscale":
                if scaler is not None:
                    scaler.unscale_(opt)
                    state["unscaled"] = True
            elif op == "clip":
                v = self.clip_value(e)
                if e["fn"] == "norm":
                    nt = e.get("norm_type") or 2.0
                    torch.nn.utils.clip_grad_norm_(params, v, norm_type=nt)
                else:
                    torch.nn.utils.clip_grad_value_(params, v)
            elif op == "step":
                lrs = [float(g["lr"]) for g in opt.param_groups]
                if e.get("scaled") and scaler is not None:
                    if not state.get("unscaled"):
                        scaler.unscale_(opt)  # what scaler.step() does first; done here to record what it sees
                        state["unscaled"] = True
                grads = [None if p.grad is None else p.grad.detach().clone() for p in params]
                before = [p.detach().clone() for p in params]
                if e.get("scaled") and scaler is not None:
                    scaler.step(opt)
                else:
                    opt.step()
                trace.steps.append({"lr": lrs, "grads": grads, "before": before,
                                    "params": [p.detach().clone() for p in params]})
            elif op == "update":
                if scaler is not None:
                    scaler.update()
                    state["unscaled"] = False
            elif op == "sched":
                if sched is not None:
                    sched.step()
            elif op == "accumulate":
                loss = state["loss"]
                if loss is None:
                    return
                how = e.get("how")
                key = acc_ids.get(id(e), -1)
                total = state["totals"].get(key, 0.0)
                if how == "tensor":
                    total = total + loss
                elif how == "detach":
                    total = total + loss.detach()
                else:
                    total = total + loss.item()
                state["totals"][key] = total
            elif op == "grad_op":
                args = e.get("args")
                kwargs = e.get("kwargs") or {}
                if args is None:
                    args, kwargs = self.op_args(e)
                meth = e["method"] + ("_" if e.get("inplace") else "")
                with torch.no_grad():
                    for p in params:
                        t = p.grad if e.get("target") == "grad" else p.data
                        if t is None:
                            continue
                        getattr(t, meth)(*[unjson(a) for a in args], **{k: unjson(v) for k, v in kwargs.items()})
            elif op in ("helper", "opaque"):
                note = f"`{e.get('code')}(...)` is not rendered (its body is not part of the check)"
                if note not in notes:
                    notes.append(note)

        try:
            for ep in range(EPOCHS):
                state["totals"] = {}
                for e in sk.get("epoch_start", []):
                    do(e, 0, ep)
                for bi in range(BATCHES):
                    state["loss"] = None
                    for e in sk["batch"]:
                        if _cond_true(e.get("cond"), bi, notes, self.mode):
                            do(e, bi, ep)
                for e in sk.get("epoch_end", []):
                    do(e, BATCHES - 1, ep)
                for key in sorted(state["totals"]):
                    total = state["totals"][key]
                    graph = torch.is_tensor(total) and total.grad_fn is not None
                    trace.graphs.append(graph)
                    trace.totals.append(float(total.detach()) if torch.is_tensor(total) else float(total))
        except Untestable:
            raise
        except Exception as e:  # noqa: BLE001
            raise Raised(tag, e)
        trace.opt_state = [v.detach().clone() for st in opt.state.values() for _, v in sorted(st.items())
                           if torch.is_tensor(v)]
        return trace

    def op_args(self, e: dict) -> tuple[list, dict]:
        """Arguments of a gradient op that are not literals, from the file's constants or the helper's call."""
        env = self.c.get("env") or {}
        args, kwargs = [], {}
        for src in e.get("arg_srcs") or []:
            ok, v = eval_src(src, env)
            if not ok:
                raise Untestable(f"the gradient op's argument `{src}` is neither a literal nor a module constant")
            args.append(v)
        for k, src in (e.get("kw_srcs") or {}).items():
            ok, v = eval_src(src, env)
            if not ok:
                raise Untestable(f"the gradient op's argument {k}=`{src}` is neither a literal nor a module constant")
            kwargs[k] = v
        note = f"the op's arguments `{e.get('args_src')}` evaluate to {', '.join(map(repr, args + list(kwargs.values())))}"
        if note not in self.notes:
            self.notes.append(note)
        return args, kwargs

    def _uses_scaler(self, sk: dict) -> bool:
        return any(e.get("scaled") or e["op"] in ("unscale", "update") for e in sk["batch"])


def _alternating(batch: list) -> str:
    """A clause for an iteration whose backward passes each have their own optimizer step before the next one (a
    GAN's discriminator then generator update: the second loss is computed through the network the first step just
    changed, which one synthetic model and one optimizer cannot render)."""
    ops = [e["op"] for e in batch if e["op"] in ("backward", "step")]
    n = ops.count("backward")
    if n > 1 and ops == ["backward", "step"] * n:
        return (f", each followed by its own optimizer step ({n} alternating updates, as a GAN's discriminator and "
                f"generator steps)")
    return ""


def check_train_loop(ctx: Ctx) -> Outcome:
    ctx.redirect = False  # only the synthetic run executes, on the CPU; no user code runs
    c = ctx.req.contract
    try:
        sk_old, sk_new, notes = read_skeletons(ctx, c)
    except Untestable as u:
        return Outcome("untestable", str(u), UNIT)
    except Raised as r:
        return Outcome("failed", f"the rewrite cannot be read: {fmt_exc(r.error)}", UNIT)
    for tag, sk in (("original", sk_old),):
        backs = [e for e in sk["batch"] if e["op"] == "backward"]
        if len(backs) != 1:
            return Outcome("untestable", f"the {tag}'s iteration has {len(backs)} backward passes"
                           f"{_alternating(sk['batch'])}; the check renders one model with one loss and one "
                           f"optimizer, so it does not verify a loop of several", UNIT)
    steps_old = sum(1 for e in sk_old["batch"] if e["op"] == "step")
    if steps_old > 1:
        return Outcome("untestable", f"the iteration steps {steps_old} optimizers (a GAN or multi-task loop); the "
                       f"check renders one model and one optimizer", UNIT)
    sched_spec = c.get("scheduler") or {}
    if sched_spec.get("several"):
        return Outcome("untestable", f"the loop steps several schedulers ({', '.join(sched_spec['several'])})", UNIT)
    free = free_conditions(sk_old, sk_new)
    if not free:
        return _verdict(c, sk_old, sk_new, notes, sched_spec, "always")
    # conditions the check cannot read: a verdict only when it holds however they fall on the batches
    outs = {mode: _verdict(c, sk_old, sk_new, notes, sched_spec, mode) for mode in MODES}
    verdicts = {o.verdict for o in outs.values()}
    what = ", ".join(free)
    if len(verdicts) == 1:
        first = outs[MODES[0]]
        if first.verdict == "untestable":
            return first
        return Outcome(first.verdict, first.detail + f" The same verdict holds with {what} true on every batch, on "
                       f"the second batch of each epoch only, and on the last batch only (each rendered in turn, a "
                       f"period that is not a literal as 1, 2 and {BATCHES}).", UNIT)
    each = "; ".join(f"{_OPAQUE[m]} (a period {_PERIOD[m]}): {outs[m].verdict}" for m in MODES)
    return Outcome("untestable", f"the verdict depends on which batches {what} holds on, which the check cannot "
                   f"read: rendered true {each}. First rendering: {outs[MODES[0]].detail}", UNIT)


def _verdict(c: dict, sk_old: dict, sk_new: dict, notes: list[str], sched_spec: dict, mode: str) -> Outcome:
    """The verdict with conditions the check cannot read rendered as `mode` says (MODES)."""
    try:
        setup = Setup(c, sk_old, mode)
        canon = canonical(sk_old, sched_spec.get("kind"), setup.scaler_on)
        run_notes: list[str] = []
        try:
            t_old = setup.run(sk_old, "old", run_notes)
        except Raised as r:
            return Outcome("untestable", f"the original loop raises {fmt_exc(r.error)} on the synthetic model", UNIT)
        try:
            t_new = setup.run(sk_new, "new", [])
        except Raised as r:
            return Outcome("failed", f"the rewritten loop raises {fmt_exc(r.error)} on the synthetic model "
                           f"({describe(sk_new)})", UNIT)
        try:
            t_ref = setup.run(canon, "ref", [])
        except Raised as r:
            return Outcome("untestable", f"the canonical order raises {fmt_exc(r.error)} on the synthetic model", UNIT)
    except Untestable as u:
        return Outcome("untestable", str(u), UNIT)
    notes = notes + setup.notes + run_notes
    what_ran = f"{setup.opt_desc}" + (f", {setup.sched_desc}" if setup.sched_desc != "no scheduler" else "") \
        + (f", {setup.scaler_desc}" if setup.scaler_desc else "")
    tail = f" {SYNTHETIC} ({what_ran}" + ("; " + "; ".join(notes) if notes else "") + ")."
    d_on = first_difference(t_old, t_new)
    if d_on is None:
        extra = ""
        if any(e["op"] == "accumulate" for e in sk_old["batch"]):
            extra = f"; the accumulated loss per epoch is the same number ({_series(t_old, 'totals')})"
            freed = sum(1 for a, b in zip(t_old.graphs, t_new.graphs) if a and not b)
            if freed:
                extra += " and the rewritten total no longer holds the autograd graph"
        return Outcome("equivalent", f"every optimizer step sees the same learning rates, gradients and parameters, and the optimizer state ends the same, in "
                       f"both versions ({len(t_old.steps)} steps){extra}." + tail, UNIT)
    d_nr = first_difference(t_new, t_ref)
    if d_nr is not None:
        what, i = d_nr
        return Outcome("failed", f"the rewrite differs from the canonical order ({describe(canon)}) at step {i + 1}: "
                       + _contrast(t_new, t_ref, what, "rewrite", "canonical") + "." + tail, UNIT)
    what, i = d_on
    shown = (_contrast(t_old, t_new, what, "original", "rewrite")
             + f" (from step {i + 1}); the rewrite follows the canonical order ({describe(canon)}).")
    hazards = loop_hazards(sk_old, t_old, t_new, setup, sched_spec)
    if hazards:
        return Outcome("fixes-hazard", shown + " Hazard shown in the original: " + "; ".join(hazards) + "." + tail, UNIT)
    return Outcome("changes-behaviour", shown + " No hazard shown: every step of the original sees nonzero "
                   "gradients, its learning rates follow the declared schedule and its declared clipping and bounds "
                   "hold; the rewrite changes the training." + tail, UNIT)


CHECKS = {"train-loop": check_train_loop}
