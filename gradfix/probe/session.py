"""The probe's observation session: hooks on optimizer steps, module calls and backward, and what they record.

Everything here observes: hooks return nothing, patched functions call through with the same arguments, and the
probe's own arithmetic runs under no_grad with torch-function dispatch off so that it builds no graph and is not
seen by the tracer. Diagnosis of what was recorded lives in diagnose.py.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field

import torch
import torch.nn as nn
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from gradfix.probe.frames import user_location
from gradfix.probe.linewatch import LineWatch
from gradfix.probe.lossgraph import constant_factor
from gradfix.probe.numeric import F32_RESOLUTION, floats, norm_tensors, norms, quiet
from gradfix.probe.tracer import OpTracer

INPLACE_ERROR = "modified by an inplace operation"


class StopProbe(BaseException):
    """Raised from the optimizer's post-step hook once enough steps ran; BaseException so `except Exception`
    in the script does not swallow it."""


@dataclass
class OptRecord:
    index: int
    opt: torch.optim.Optimizer
    params: list = field(default_factory=list)
    dense: list = field(default_factory=list)  # params with a strided layout (norms; the write check)
    hists: list = field(default_factory=list)  # grad_hist's list for each of params, in order
    steps: int = 0
    step_loc: tuple[str, int] | None = None
    grad_hist: dict[int, list] = field(default_factory=dict)  # id(param) -> grad norm (None: no grad) per step
    # accumulation check: representative params, the grad object and version they held after the last step
    reps: list = field(default_factory=list)
    cleared: bool = True
    accumulated_steps: list[int] = field(default_factory=list)
    # update size: per step, the largest lr*|g|/|w| (SGD family) or whether Adam's sqrt(v_hat) stayed below eps
    sgd_ratio: list[float] = field(default_factory=list)
    adam_below_eps: list[bool] = field(default_factory=list)
    adam_eps: float | None = None
    kind: str = "other"

    @property
    def may_vanish(self) -> bool:
        """Every step so far had vanishing updates (the finding needs all of them): once one did not, the update
        checks and the loss-scale walk stop for this optimizer, as they could no longer change the report."""
        if self.kind == "sgd":
            return not self.sgd_ratio or self.sgd_ratio[-1] < F32_RESOLUTION
        if self.kind == "adam":
            return not self.adam_below_eps or self.adam_below_eps[-1]
        return False


@dataclass
class SchedRecord:
    sched: object
    steps: list = field(default_factory=list)  # (loader epoch key, total optimizer steps) per step() call
    loc: tuple[str, int] | None = None


def _opt_kind(opt) -> str:
    name = type(opt).__name__
    if name in ("SGD",):
        return "sgd"
    if name in ("Adam", "AdamW", "NAdam", "RAdam"):
        return "adam"
    return "other"


_MODE_DEPENDENT = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)


class Probe:
    """Observe training steps. `with gradfix.probe() as p: ...` then `p.report()`; `steps` stops the run (by
    raising StopProbe out of optimizer.step(), which the context manager swallows) once every optimizer has
    stepped that many times."""

    def __init__(self, steps: int | None = None, *, replay_step: int | None = None):
        self.max_steps = steps
        self.replay_step = replay_step  # rerun of a failed backward: trace ops from this step on
        self.opts: dict[int, OptRecord] = {}
        self.scheds: dict[int, SchedRecord] = {}
        self.roots: dict[int, nn.Module] = {}
        self.called: dict[int, nn.Module] = {}
        self.params: dict[int, torch.Tensor] = {}
        self.total_steps = 0
        self.depth = 0
        self.main_globals: dict | None = None
        # per-window state (between two optimizer steps)
        self._root_modes: dict[int, bool] = {}  # root id -> train mode at its last grad-enabled call before a step
        # id(param) -> (data ptr, norm as a 0-d tensor, read at the step) after its root's last forward
        self._fwd_fp: dict[int, tuple[int, torch.Tensor]] = {}
        self._mode_locs: dict[int, tuple[str, int]] = {}
        self._root_params: dict[int, list] = {}
        self._held: set[int] = set()  # ids of the parameters some optimizer holds
        self._held_gen = 0  # bumped when _held changes
        self._root_watch: dict[int, tuple[int, list, list]] = {}  # root id -> (_held_gen, snapshot list, unheld)
        self._mode_dependent: dict[int, bool] = {}
        # results
        self.writes: list[dict] = []  # parameters written between their forward use and the step
        self.eval_roots: dict[int, dict] = {}
        self.root_calls: dict[int, tuple[str, int] | None] = {}  # where each model is first called
        self.outputs: dict[int, list] = {}  # root id -> its first training output per step (detached, not copied)
        self._out_seen: set[int] = set()
        self.outside: dict[int, float] = {}  # id(param) -> grad norm, params with grads in no optimizer
        self.scale: dict | None = None  # smallest constant factor found on the loss chain
        self.cut: dict | None = None
        self.no_grad_calls: dict[int, tuple[str, int]] = {}
        self.inplace_error: dict | None = None
        self.failure: BaseException | None = None
        # tracing
        self.tracer: OpTracer | None = None
        self.last_tracer: OpTracer | None = None
        self._want_lines = False
        self._want_cuts: set[int] = set()  # ids of params with no gradient so far
        self._watch: set[int] = set()  # ids of params written outside the optimizer whose writing line is wanted
        self._line_watch = None
        self._loader_epoch = None
        self._loader_len: dict = {}
        self._handles: list = []
        self._patches: list = []
        self._active = False

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, et, ev, tb):
        self.stop()
        return et is not None and issubclass(et, StopProbe)

    def start(self) -> None:
        import torch.utils.data as tud
        from torch.optim import lr_scheduler

        self._active = True
        self._handles += [register_optimizer_step_pre_hook(self._pre_step),
                          register_optimizer_step_post_hook(self._post_step),
                          nn.modules.module.register_module_forward_pre_hook(self._fwd_pre),
                          nn.modules.module.register_module_forward_hook(self._fwd_post, always_call=True)]
        probe = self
        orig_backward = torch.autograd.backward

        def backward(tensors, *args, **kwargs):
            probe._on_backward(tensors)
            try:
                if probe.replay_step is not None and probe.total_steps >= probe.replay_step:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            return orig_backward(tensors, *args, **kwargs)
                        finally:
                            probe._anomaly_warnings = [str(w.message) for w in caught]
                return orig_backward(tensors, *args, **kwargs)
            except RuntimeError as exc:
                if INPLACE_ERROR in str(exc) and probe.inplace_error is None:
                    probe.inplace_error = {"message": str(exc), "step": probe.total_steps,
                                           "backward_loc": user_location(), "warnings":
                                           getattr(probe, "_anomaly_warnings", [])}
                raise

        self._patch(torch.autograd, "backward", backward)

        orig_sched_step = lr_scheduler.LRScheduler.step

        def sched_step(sched, *args, **kwargs):
            if getattr(sched, "_step_count", 1) > 0 and probe._active:
                probe._on_sched_step(sched)
            return orig_sched_step(sched, *args, **kwargs)

        self._patch(lr_scheduler.LRScheduler, "step", sched_step)

        orig_iter = tud.DataLoader.__iter__

        def loader_iter(loader):
            key = probe._loader_len.get(id(loader))
            count = (key[1] + 1) if key else 0
            try:
                n = len(loader)
            except TypeError:
                n = None
            probe._loader_len[id(loader)] = (n, count)
            probe._loader_epoch = (id(loader), count, n)
            return orig_iter(loader)

        self._patch(tud.DataLoader, "__iter__", loader_iter)

        orig_train = nn.Module.train

        def train(module, mode=True):
            if not mode and probe._active:
                loc = user_location()
                if loc is not None:
                    probe._mode_locs[id(module)] = loc
            return orig_train(module, mode)

        self._patch(nn.Module, "train", train)
        if self.replay_step == 0:
            self._arm(log=True)

    def _patch(self, owner, name, value) -> None:
        self._patches.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    def _end_line_watch(self) -> None:
        watch, self._line_watch = self._line_watch, None
        watch.close()
        self._watch = set()
        if watch.found is not None:
            for w in self.writes:
                if w["param"] in watch.ids and w["write_loc"] is None:
                    w["write_loc"] = watch.found

    def stop(self) -> None:
        if not self._active:
            return
        if self._line_watch is not None:
            self._end_line_watch()
        self._active = False
        self.last_tracer = self._disarm()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for rec in self.opts.values():
            for rep in rec.reps:
                if rep.get("handle") is not None:
                    rep["handle"].remove()
        for owner, name, value in reversed(self._patches):
            setattr(owner, name, value)
        self._patches.clear()
        if self.replay_step is not None:
            torch.autograd.set_detect_anomaly(False)

    # -- results -----------------------------------------------------------------------------------------------
    def result(self):
        """The diagnosis so far as a Report (findings, per-layer rows, steps)."""
        from gradfix.probe.diagnose import diagnose
        from gradfix.probe.inplace import inplace_finding
        from gradfix.probe.report import Report

        findings, layers = diagnose(self)
        if self.inplace_error is not None:
            findings.insert(0, inplace_finding(self.inplace_error))
        return Report(findings, layers, max((r.steps for r in self.opts.values()), default=0))

    def report(self, format: str = "text"):  # noqa: A002 - mirrors the CLI's --format
        """The report as text, or with format="json" as the CLI's JSON object."""
        rep = self.result()
        return rep.to_json() if format == "json" else rep.text()

    # -- tracing -----------------------------------------------------------------------------------------------
    def _arm(self, *, lines: bool = False, cuts: bool = False, log: bool = False) -> None:
        if self.tracer is not None:
            return
        self.tracer = OpTracer(lines=lines, taint=cuts, log=log)
        if log:
            torch.autograd.set_detect_anomaly(True, check_nan=False)  # forward tracebacks only
        self.tracer.__enter__()

    def _disarm(self) -> OpTracer | None:
        tracer, self.tracer = self.tracer, None
        if tracer is not None:
            try:
                tracer.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the script left the mode stack unbalanced
                pass
        return tracer

    @property
    def pending(self) -> bool:
        """A localisation is still wanted (so the run gets one more step before it stops)."""
        return (self._want_lines and (self.scale is None or self.scale.get("loc") is None)) or bool(
            self._want_cuts and self.cut is None) or bool(self._watch)

    # -- module calls ------------------------------------------------------------------------------------------
    def _fwd_pre(self, module, args):
        self.called[id(module)] = module
        if self.depth == 0:
            self.roots.setdefault(id(module), module)
            if torch.is_grad_enabled():  # the training forward, not a no_grad validation pass
                self._root_modes[id(module)] = module.training
                if id(module) not in self.root_calls:
                    self.root_calls[id(module)] = user_location()
            if self.main_globals is None:
                main = sys.modules.get("__main__")
                self.main_globals = getattr(main, "__dict__", None)
        self.depth += 1

    def _fwd_post(self, module, args, output):
        depth = self.depth = max(0, self.depth - 1)
        if self._want_cuts:
            tracer = self.tracer
            if tracer is not None and tracer.want_taint:
                self._taint(module, output, tracer)
        if depth:
            return  # a submodule: nothing more per call
        if self._watch and self._line_watch is None:
            self._line_watch = LineWatch([self.params[i] for i in self._watch])
        if id(module) not in self._out_seen and torch.is_grad_enabled():
            self._out_seen.add(id(module))
            out = output if isinstance(output, torch.Tensor) else next(
                (t for t in (output.values() if isinstance(output, dict) else output if isinstance(
                    output, (tuple, list)) else ()) if isinstance(t, torch.Tensor)), None)
            if out is not None and out.is_floating_point() and out.numel():
                self.outputs.setdefault(id(module), []).append(out.detach())  # compared at the end, no copy
        snap = self._root_lists(module)[1]
        if snap:
            fp = self._fwd_fp
            with quiet():  # one _foreach_norm; its results are read with the step's own norms
                for p, n in zip(snap, norm_tensors(snap)):
                    fp[id(p)] = (p.data_ptr(), n)

    def _taint(self, module, output, tracer: OpTracer) -> None:
        own = [p for p in module.parameters(recurse=False) if id(p) in self._want_cuts]
        if own:
            if not torch.is_grad_enabled():
                loc = user_location()
                if loc is not None:
                    for p in own:
                        self.no_grad_calls.setdefault(id(p), loc)
            else:
                tracer.taint_outputs(output)

    def _root_lists(self, module) -> tuple[int, list, list]:
        """(_held_gen, the root's dense parameters to fingerprint after its forward, its parameters no optimizer
        holds), recomputed when the optimizers' parameters change. Before the first step every parameter is
        fingerprinted; after it only those an optimizer steps, the only ones the write check compares."""
        rid = id(module)
        cached = self._root_watch.get(rid)
        if cached is not None and cached[0] == self._held_gen:
            return cached
        plist = self._root_params.get(rid)
        if plist is None:
            plist = self._root_params[rid] = [p for p in module.parameters()]
        held = self._held
        snap = [p for p in plist if p.layout == torch.strided and (not held or id(p) in held)]
        cached = self._root_watch[rid] = (self._held_gen, snap, [p for p in plist if id(p) not in held])
        return cached

    # -- backward ----------------------------------------------------------------------------------------------
    def _scale_wanted(self) -> bool:
        """The loss-scale walk can still matter: no optimizer stepped yet, or one may have vanishing updates."""
        return not self.opts or any(r.may_vanish for r in self.opts.values())

    def _on_backward(self, tensors) -> None:
        if not self._scale_wanted():
            return
        root = tensors if isinstance(tensors, torch.Tensor) else (tensors[0] if tensors else None)
        if not isinstance(root, torch.Tensor) or root.grad_fn is None:
            return
        with quiet():
            factor, node = constant_factor(root.grad_fn)
        if node is None or abs(factor) > 1e-3:  # factor: the smallest single constant on the chain
            return
        loc = self.tracer.lines.get(id(node)) if self.tracer is not None and self.tracer.want_lines else None
        if self.scale is None or loc is not None:
            self.scale = {"factor": factor, "node": node.name(), "loc": loc,
                          "backward_loc": user_location()}
        if loc is None:
            self._want_lines = True

    # -- optimizer steps ---------------------------------------------------------------------------------------
    def _record(self, opt) -> OptRecord:
        rec = self.opts.get(id(opt))
        if rec is None:
            rec = self.opts[id(opt)] = OptRecord(len(self.opts), opt, kind=_opt_kind(opt))
        n = sum(len(g["params"]) for g in opt.param_groups)
        if n != len(rec.params):
            rec.params = [p for g in opt.param_groups for p in g["params"]]
            rec.dense = [p for p in rec.params if p.layout == torch.strided]
            rec.hists = [rec.grad_hist.setdefault(id(p), []) for p in rec.params]
            for p in rec.params:
                self.params[id(p)] = p
            self._held = {id(p) for r in self.opts.values() for p in r.params}
            self._held_gen += 1
        return rec

    def _pre_step(self, opt, args, kwargs):
        if not self._active:
            return
        tracer = self._disarm()
        if tracer is not None:
            self._harvest(tracer)
        if self._line_watch is not None:
            self._end_line_watch()
        rec = self._record(opt)
        rec.step_loc = user_location() or rec.step_loc
        with quiet():
            self._observe_grads(rec)
            self._check_modes(rec)
            self._check_outside()

    def _observe_grads(self, rec: OptRecord) -> None:
        """Gradient norms per parameter; the SGD update check; the write check (weights vs their forward).
        Gradients and weights are normed in one batched call (one _foreach_norm, one stack, one read)."""
        ps = rec.params
        grads = [p.grad for p in ps]
        with_grad = [i for i, g in enumerate(grads) if g is not None]
        dense = rec.dense
        fp = self._fwd_fp
        fwd = [(j, p, fp[id(p)]) for j, p in enumerate(dense) if id(p) in fp] if fp else []
        # one read for the gradient norms, the weight norms and the weight norms taken after the forward
        vals = floats(norm_tensors([grads[i] for i in with_grad] + dense) + [f[1] for _, _, f in fwd])
        ng, nd = len(with_grad), len(dense)
        gvals, wvals = vals[:ng], vals[ng:ng + nd]
        row: list = [None] * len(ps)
        for i, v in zip(with_grad, gvals):
            row[i] = v
        for h, v in zip(rec.hists, row):
            h.append(v)
        # gradients still there from the previous step, never cleared in between
        if rec.steps > 0 and rec.reps and not rec.cleared:
            self._rep_seen(rec, None)
            if not rec.cleared:
                rec.accumulated_steps.append(rec.steps)
        if fwd:
            self._check_writes(rec, dense, wvals, fwd, vals[ng + nd:])
        # the gradient's share of the update, against float32 resolution of the weights
        if rec.kind == "sgd" and rec.may_vanish:
            wn = dict(zip(map(id, dense), wvals))
            lr_of = {id(p): float(g["lr"]) for g in rec.opt.param_groups for p in g["params"]}
            ratios = [(lr_of[id(ps[i])] * v / wn[id(ps[i])]) if wn[id(ps[i])] > 0 else float("inf")
                      for i, v in zip(with_grad, gvals) if v > 0 and id(ps[i]) in wn]
            if ratios:
                rec.sgd_ratio.append(max(ratios))
        if rec.steps == 0:
            self._want_cuts |= {id(p) for p, v in zip(ps, row) if p.requires_grad and not v}
        elif self._want_cuts:
            self._want_cuts -= {id(p) for p, v in zip(ps, row) if v}

    def _check_writes(self, rec: OptRecord, dense, wvals, fwd, fwd_vals) -> None:
        """Each weight against its norm and data pointer after the forward that used it."""
        for (j, p, (ptr, _)), before in zip(fwd, fwd_vals):
            n = wvals[j]
            now_ptr = p.data_ptr()
            if now_ptr != ptr or n != before:
                self.writes.append({"param": id(p), "step": rec.steps, "opt": rec.index,
                                    "storage": now_ptr != ptr, "before": before, "after": n,
                                    "loc": rec.step_loc, "write_loc": None})
                self._fwd_fp.pop(id(p))
                if not any(w["write_loc"] for w in self.writes if w["param"] == id(p)) and len(
                        [w for w in self.writes if w["param"] == id(p)]) == 1:
                    self._watch.add(id(p))

    def _check_modes(self, rec: OptRecord) -> None:
        mine = None
        for rid, train_mode in self._root_modes.items():
            if train_mode or rid in self.eval_roots:
                continue
            root = self.roots[rid]
            if rid not in self._mode_dependent:
                self._mode_dependent[rid] = any(isinstance(m, _MODE_DEPENDENT) for m in root.modules())
            if not self._mode_dependent[rid]:
                continue
            if mine is None:
                mine = {id(p) for p, h in zip(rec.params, rec.hists) if h[-1]}
            trained = [p for p in root.parameters() if id(p) in mine]
            if trained:
                self.eval_roots[rid] = {"step": rec.steps, "opt": rec.index, "loc": self._mode_locs.get(rid),
                                        "params": [id(p) for p in trained]}

    def _check_outside(self) -> None:
        extra = [p for root in self.roots.values() for p in self._root_lists(root)[2] if p.grad is not None]
        for p, n in zip(extra, norms([p.grad for p in extra])):
            if n > 0:
                self.outside[id(p)] = max(n, self.outside.get(id(p), 0.0))
                self.params[id(p)] = p

    def _post_step(self, opt, args, kwargs):
        if not self._active:
            return
        rec = self._record(opt)
        rec.steps += 1
        self.total_steps += 1
        self._root_modes.clear()
        self._fwd_fp.clear()
        self._out_seen.clear()
        if rec.kind == "adam" and rec.may_vanish:
            with quiet():
                self._check_adam(rec)
        self._pick_reps(rec)
        if self._want_lines and not self._scale_wanted():
            self._want_lines = False  # the line of a loss scale is reported only with vanishing updates
        if self.replay_step is not None:
            if self.total_steps >= self.replay_step:
                self._arm(log=True)
            return
        done = self.max_steps is not None and self.opts and all(
            r.steps >= self.max_steps for r in self.opts.values())
        capped = self.max_steps is not None and self.total_steps >= 4 * self.max_steps + 2
        if (done and not self.pending) or capped or (done and rec.steps >= self.max_steps + 2):
            raise StopProbe()
        if self._want_lines or self._want_cuts:
            self._arm(lines=self._want_lines, cuts=bool(self._want_cuts))

    def _check_adam(self, rec: OptRecord) -> None:
        below = True
        seen = False
        for g in rec.opt.param_groups:
            eps = float(g.get("eps", 1e-8))
            beta2 = float(g["betas"][1])
            rec.adam_eps = eps
            for p in g["params"]:
                st = rec.opt.state.get(p) or {}
                v = st.get("exp_avg_sq")
                if v is None or p.grad is None:
                    continue
                step = float(st.get("step", 1))
                seen = True
                vmax = float(v.max()) if v.numel() else 0.0
                if vmax == 0.0:
                    continue
                if (vmax / (1 - beta2 ** step)) ** 0.5 >= eps:
                    below = False
                    break
            if not below:
                break
        if seen:
            rec.adam_below_eps.append(below)

    def _pick_reps(self, rec: OptRecord) -> None:
        """Up to two parameters with a gradient stand for the optimizer in the accumulation check; their hooks
        stay registered while they keep being chosen."""
        chosen = []
        for p in rec.params:
            g = p.grad
            if g is not None and p.requires_grad and g.layout == torch.strided:
                chosen.append(p)
                if len(chosen) == 2:
                    break
        reps = rec.reps
        if len(reps) == len(chosen) and all(r["param"] is p for r, p in zip(reps, chosen)):
            for r, p in zip(reps, chosen):  # the same representatives as last step: their hooks stay
                r["grad"], r["version"] = id(p.grad), p.grad._version
            rec.cleared = not reps
            return
        old = {id(r["param"]): r for r in rec.reps}
        keep = {id(p) for p in chosen}
        for r in rec.reps:
            if id(r["param"]) not in keep and r.get("handle") is not None:
                r["handle"].remove()
        reps = []
        for p in chosen:
            r = old.get(id(p))
            if r is None:
                r = {"param": p, "handle": p.register_hook(lambda grad, rec=rec: self._rep_seen(rec, None))}
            r["grad"], r["version"] = id(p.grad), p.grad._version
            reps.append(r)
        rec.reps = reps
        rec.cleared = not rec.reps

    def _rep_seen(self, rec: OptRecord, _grad) -> None:
        """Runs before autograd accumulates into a representative parameter (and at the next step): were the
        gradients left by the last step cleared since?"""
        if rec.cleared or not self._active:
            return
        with quiet():
            for rep in rec.reps:
                g = rep["param"].grad
                if g is None or id(g) != rep["grad"]:
                    rec.cleared = True
                elif g._version != rep["version"]:
                    rep["version"] = g._version
                    if g.count_nonzero() == 0:
                        rec.cleared = True

    # -- schedulers --------------------------------------------------------------------------------------------
    def _on_sched_step(self, sched) -> None:
        rec = self.scheds.get(id(sched))
        if rec is None:
            rec = self.scheds[id(sched)] = SchedRecord(sched)
        rec.loc = user_location() or rec.loc
        rec.steps.append((self._loader_epoch, self.total_steps))

    # -- tracer results ----------------------------------------------------------------------------------------
    def _harvest(self, tracer: OpTracer) -> None:
        if tracer.want_taint and self.cut is None:
            best = tracer.best_cut()
            if best is not None:
                self.cut = {"op": best[0], "loc": best[1]}
        if tracer.want_lines:
            self._want_lines = False
        if tracer.want_taint:
            self._want_cuts = set()
