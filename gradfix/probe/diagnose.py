"""Turn what a probe session recorded into findings and per-layer rows, with names from named_parameters()."""

from __future__ import annotations

import torch
import torch.nn as nn

from gradfix.probe.findings import KINDS, Finding, Layer
from gradfix.probe.numeric import F32_RESOLUTION
from gradfix.probe.session import Probe

# scheduler class -> the constructor argument that counts its period, for "declared per epoch"
_EPOCH_SCHEDULERS = {"StepLR": "step_size", "MultiStepLR": "milestones", "ExponentialLR": "gamma",
                     "CosineAnnealingLR": "T_max", "PolynomialLR": "total_iters"}
_CUT_RULES = {"detach": "GF307", "item": "GF307", "tolist": "GF307", "numpy": "GF307", "tensor": "GF307",
              "as_tensor": "GF307", "__get__:data": "GF104", "__float__": "GF307", "__int__": "GF307"}
_CUT_WORDS = {"__get__:data": "`.data`", "tensor": "`torch.tensor(...)`", "as_tensor": "`torch.as_tensor(...)`",
              "__float__": "`float(...)`", "__int__": "`int(...)`"}


class Names:
    """Parameter and module names as named_parameters() gives them; with several top-level models, prefixed by
    the script's variable name for each (`G.fc.weight`, `D.fc.weight`)."""

    def __init__(self, probe: Probe):
        glob = probe.main_globals or {}
        self.var = {id(v): k for k, v in list(glob.items()) if isinstance(v, (nn.Module, torch.Tensor))
                    and not k.startswith("_")}
        roots = list(probe.roots.values())
        for v in list(glob.values()):  # models the script holds but never called
            if isinstance(v, nn.Module) and id(v) not in probe.roots:
                roots.append(v)
        roots = [r for r in roots if next(r.parameters(), None) is not None]  # not loss modules
        roots.sort(key=lambda m: -sum(1 for _ in m.modules()))
        inside: set[int] = set()
        top = []
        for r in roots:
            if id(r) not in inside:
                top.append(r)
                inside |= {id(m) for m in r.modules()}
        self.top = top
        self.param: dict[int, str] = {}
        self.owner: dict[int, tuple[str, nn.Module]] = {}
        for r in top:
            prefix = "" if len(top) == 1 else (self.var.get(id(r)) or type(r).__name__) + "."
            for mname, m in r.named_modules():
                for pname, p in m.named_parameters(recurse=False):
                    full = prefix + (f"{mname}.{pname}" if mname else pname)
                    self.param.setdefault(id(p), full)
                    self.owner.setdefault(id(p), ((prefix + mname).rstrip(".") or self.var.get(id(r), "model"), m))

    def of(self, p: torch.Tensor, fallback: str) -> str:
        return self.param.get(id(p)) or self.var.get(id(p)) or fallback

    def root_name(self, m: nn.Module) -> str:
        return self.var.get(id(m)) or type(m).__name__


def _where(loc):
    return (loc[0], loc[1]) if loc else (None, None)


def _list(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _modules_of(ps, names: Names) -> list[str]:
    out: list[str] = []
    for p in ps:
        mod = names.owner.get(id(p), (None, None))[0]
        if mod and mod not in out:
            out.append(mod)
    return out


def diagnose(probe: Probe) -> tuple[list[Finding], list[Layer]]:
    names = Names(probe)
    findings: list[Finding] = []
    layers: list[Layer] = []
    for rec in probe.opts.values():
        fallback = {id(p): f"optimizer[{rec.index}] param {j} {tuple(p.shape)}" for j, p in enumerate(rec.params)}
        for p in rec.params:
            layers.append(Layer(names.of(p, fallback[id(p)]), tuple(p.shape), rec.index, p.requires_grad,
                                list(rec.grad_hist.get(id(p), []))))
        if rec.steps == 0:
            continue
        path, line = _where(rec.step_loc)
        label = f"optimizer {rec.index} ({type(rec.opt).__name__})"
        trainable = [p for p in rec.params if p.requires_grad]
        pname = lambda p, f=fallback: names.of(p, f[id(p)])  # noqa: E731
        if not trainable:
            findings.append(Finding(
                "nothing-to-train", f"{label} has nothing to train: every one of its {len(rec.params)} parameters is "
                f"frozen (requires_grad=False), so step() changes nothing", path, line,
                [pname(p) for p in rec.params], KINDS["nothing-to-train"]))
            continue
        never = [p for p in trainable if not any(rec.grad_hist.get(id(p), []))]
        never = _drop_lone_zeros(rec, never, names)
        if never and len(never) == len(trainable):
            used = [p for p in never if id(p) in names.owner and id(names.owner[id(p)][1]) in probe.called]
            zero = all(any(g == 0 for g in rec.grad_hist[id(p)]) for p in never)
            why = ("none of them is used by the forward pass" if not used
                   else "every gradient is exactly zero on every probed step" if zero
                   else "none of them got a gradient over the probed steps" + _cut_clause(probe, never, names))
            rule = KINDS["nothing-to-train"] if not used else None if zero else _cut_rule(probe, never)
            findings.append(Finding(
                "nothing-to-train", f"{label} has nothing to train: {why} ({_list([pname(p) for p in never])})",
                path, line, [pname(p) for p in never], rule))
        elif never:
            findings.append(_no_gradient(probe, rec, never, names, pname, label, path, line))
        findings += _vanishing(probe, rec, trainable, pname, label, path, line)
        if rec.accumulated_steps:
            steps = ", ".join(str(s + 1) for s in rec.accumulated_steps)
            findings.append(Finding(
                "gradient-accumulation", f"{label}: step() {steps} used gradients accumulated since the previous "
                "step: nothing cleared them in between (no zero_grad()), so every update adds up all earlier batches",
                path, line, [], KINDS["gradient-accumulation"]))
    findings += _outside(probe, names)
    findings += _writes(probe, names)
    findings += _eval_mode(probe, names)
    findings += _schedulers(probe)
    findings += _constant_outputs(probe, names)
    return findings, layers


def _constant_outputs(probe: Probe, names: Names) -> list[Finding]:
    out = []
    stepped = {id(p) for r in probe.opts.values() for p in r.params if p.requires_grad}
    for rid, outs in probe.outputs.items():
        root = probe.roots[rid]
        if len(outs) < 3 or not any(id(p) in stepped for p in root.parameters()):
            continue
        with torch.no_grad():
            if not all(o.shape == outs[0].shape and torch.equal(o, outs[0]) for o in outs[1:]):
                continue
            o = outs[0]
            first = float(o.reshape(-1)[0])
            value = f"every element {first:g}" if bool((o == first).all()) else f"mean {float(o.double().mean()):g}"
        shape = tuple(o.shape)
        path, line = _where(probe.root_calls.get(rid))
        rn = names.root_name(root)
        out.append(Finding("constant-output",
                           f"`{rn}` returns the same output on all {len(outs)} probed steps "
                           f"({'x'.join(map(str, shape))}, "
                           f"{value}) although the batches and the updates differ: it depends neither on its input "
                           "nor on its parameters, so the loss cannot go down", path, line,
                           [n for n in (names.param.get(id(p)) for p in root.parameters()) if n][:8],
                           KINDS["constant-output"]))
    return out


def _drop_lone_zeros(rec, never, names: Names) -> list:
    """A parameter whose gradient is exactly zero while its module's other parameters learn is structural, not a
    stop (a WGAN critic's last bias: the real and fake terms cancel); keep zeros only for whole modules."""
    bad = {id(p) for p in never}
    keep = []
    for p in never:
        if all(g is None for g in rec.grad_hist[id(p)]):
            keep.append(p)
            continue
        owner = names.owner.get(id(p), (None, None))[1]
        siblings = [q for q in owner.parameters(recurse=False) if q.requires_grad] if owner is not None else [p]
        if all(id(q) in bad for q in siblings):
            keep.append(p)
    return keep


def _cut_rule(probe: Probe, ps) -> str | None:
    if any(id(p) in probe.no_grad_calls for p in ps):
        return "GF212"
    return _CUT_RULES.get(probe.cut["op"]) if probe.cut is not None else None


def _cut_clause(probe: Probe, ps, names: Names) -> str:
    calls = [probe.no_grad_calls[id(p)] for p in ps if id(p) in probe.no_grad_calls]
    if calls:
        return f": their module is called under torch.no_grad() at line {calls[0][1]}"
    if probe.cut is not None:
        op = probe.cut["op"]
        return f": the path to the loss is cut by {_CUT_WORDS.get(op, f'`.{op}()`')} at line {probe.cut['loc'][1]}"
    return ""


def _no_gradient(probe, rec, never, names, pname, label, path, line) -> Finding:
    none = [p for p in never if all(g is None for g in rec.grad_hist[id(p)])]
    kind_txt = ("no gradient (`.grad` is None)" if len(none) == len(never)
                else "no gradient (None or exactly zero)" if none else "an exactly zero gradient")
    mods = _modules_of(never, names)
    uncalled = [m for p in never if id(p) in names.owner and id((m := names.owner[id(p)][1])) not in probe.called]
    rule = None
    calls = [probe.no_grad_calls[id(p)] for p in never if id(p) in probe.no_grad_calls]
    if calls:
        why = f"their module is called under torch.no_grad() at line {calls[0][1]}"
        path, line = calls[0]
        rule = "GF212"
    elif uncalled and len(uncalled) == len(never):
        why = "their module is never called in the forward pass"
        rule = "GF210"
    elif probe.cut is not None and none:
        op = probe.cut["op"]
        why = f"the path from their module's output to the loss is cut by {_CUT_WORDS.get(op, f'`.{op}()`')}"
        path, line = probe.cut["loc"]
        rule = _CUT_RULES.get(op)
    elif none:
        why = "their output never reaches the loss"
    else:
        why = "every gradient element is 0 (a dead activation, a zero_grad() before step(), or an underflow)"
    return Finding("no-gradient", f"{label} steps {len(never)} parameter{'s' if len(never) != 1 else ''} of "
                   f"{_list(mods) if mods else 'the model'} that never got a gradient over the probed steps: "
                   f"{kind_txt}; {why}", path, line, [pname(p) for p in never], rule)


def _vanishing(probe, rec, trainable, pname, label, path, line) -> list[Finding]:
    detail = None
    if rec.kind == "sgd" and rec.sgd_ratio and max(rec.sgd_ratio) < F32_RESOLUTION:
        detail = (f"lr x |grad| is at most {max(rec.sgd_ratio):.1e} of |weight|, below float32 resolution "
                  f"({F32_RESOLUTION:.1e}): the updates round away and the weights do not change")
    elif rec.kind == "adam" and rec.adam_below_eps and all(rec.adam_below_eps):
        detail = (f"the gradients' running RMS stays below eps={rec.adam_eps:g} in every parameter, so eps "
                  "dominates Adam's denominator and each update is a small fraction of a normal step")
    if detail is None:
        return []
    rule = None
    scale = probe.scale
    if scale is not None:
        f = scale["factor"]
        how = f"divided by {1 / f:.0e}" if scale["node"].startswith("Div") else f"multiplied by {f:.0e}"
        detail = f"the loss is {how} (a constant on the whole loss); " + detail
        if scale.get("loc"):
            path, line = scale["loc"]
        rule = KINDS["vanishing-update"]
    return [Finding("vanishing-update", f"{label}: updates vanish: {detail}", path, line,
                    [pname(p) for p in trainable], rule)]


def _outside(probe: Probe, names: Names) -> list[Finding]:
    if not probe.outside or not probe.opts:
        return []
    held = {id(p) for r in probe.opts.values() for p in r.params}
    ps = [probe.params[i] for i in probe.outside if i not in held]
    if not ps:
        return []
    first = next(iter(probe.opts.values()))
    path, line = _where(first.step_loc)
    plist = [names.of(p, f"param {tuple(p.shape)}") for p in ps]
    mods = _list(_modules_of(ps, names)) or "the model"
    return [Finding("gradient-outside-optimizer",
                    f"{len(ps)} parameter{'s' if len(ps) != 1 else ''} of {mods}"
                    f" get gradients but no optimizer holds them, so they are never updated", path, line, plist,
                    KINDS["gradient-outside-optimizer"])]


def _writes(probe: Probe, names: Names) -> list[Finding]:
    out: list[Finding] = []
    by_step: dict = {}
    for w in probe.writes:
        by_step.setdefault((w["opt"], w["loc"]), []).append(w)
    for (_, loc), ws in by_step.items():
        ps = []
        for w in ws:
            n = names.of(probe.params[w["param"]], "param")
            if n not in ps:
                ps.append(n)
        how = "its storage replaced (`.data = ...`)" if any(w["storage"] for w in ws) else "its values changed"
        path, line = _where(ws[0].get("write_loc") or loc)
        where = f" at line {ws[0]['write_loc'][1]}" if ws[0].get("write_loc") else ""
        out.append(Finding("parameter-written-outside-optimizer",
                           f"{_list(ps)} {'was' if len(ps) == 1 else 'were'} written outside the optimizer{where} "
                           f"between the forward pass that used {'it' if len(ps) == 1 else 'them'} and step() "
                           f"({how}, e.g. a `.data` clamp in the loss): backward's gradient belongs to other values "
                           "than the ones stepped; move the write after step()", path, line, ps,
                           KINDS["parameter-written-outside-optimizer"]))
    return out


def _eval_mode(probe: Probe, names: Names) -> list[Finding]:
    out = []
    for rid, info in probe.eval_roots.items():
        root = probe.roots[rid]
        rn = names.root_name(root)
        ps = [names.of(probe.params[i], "param") for i in info["params"] if i in probe.params] or [
            n for n in (names.param.get(id(p)) for p in root.parameters()) if n]
        loc = info["loc"] or next((r.step_loc for r in probe.opts.values() if r.index == info["opt"]), None)
        path, line = _where(loc)
        at = f" (`{rn}.eval()` at line {info['loc'][1]} is not undone by `{rn}.train()`)" if info["loc"] else ""
        out.append(Finding("eval-mode-while-training",
                           f"`{rn}` is in eval mode in training step {info['step'] + 1}{at}: dropout and batch norm "
                           "behave as at inference while its parameters are trained", path, line, ps,
                           KINDS["eval-mode-while-training"]))
    return out


def _schedulers(probe: Probe) -> list[Finding]:
    out = []
    for rec in probe.scheds.values():
        cls = type(rec.sched).__name__
        arg = _EPOCH_SCHEDULERS.get(cls)
        if arg is None:
            continue
        per_epoch: dict = {}
        for key, opt_steps in rec.steps:
            if key is not None and key[2]:
                per_epoch.setdefault(key, []).append(opt_steps)
        busy = [(k, v) for k, v in per_epoch.items() if len(v) >= 2 and v[-1] > v[0]]
        if not busy:
            continue
        key, calls = busy[0]
        batches = key[2]
        period = _period(rec.sched, cls, batches)
        if period is None:
            continue
        path, line = _where(rec.loc)
        out.append(Finding("epoch-scheduler-per-batch",
                           f"`{cls}` ({period}) is stepped {len(calls)} times within one pass over the "
                           f"{batches}-batch DataLoader: its period is counted in epochs, so stepping it per batch "
                           "decays the learning rate len(loader) times too fast; step it once per epoch", path, line,
                           [], KINDS["epoch-scheduler-per-batch"]))
    return out


def _period(sched, cls: str, batches: int) -> str | None:
    """A description of the constructor's period when it is shorter than one epoch of batches (counted in
    epochs, then), else None (a period of many batches may well be meant in iterations)."""
    if cls == "StepLR" and sched.step_size < batches:
        return f"step_size={sched.step_size}"
    if cls == "MultiStepLR" and sched.milestones and max(sched.milestones) < batches:
        return f"milestones={sorted(sched.milestones.elements())}"
    if cls == "ExponentialLR" and sched.gamma ** batches < 0.1:
        return f"gamma={sched.gamma}"
    if cls == "CosineAnnealingLR" and sched.T_max < batches:
        return f"T_max={sched.T_max}"
    if cls == "PolynomialLR" and sched.total_iters < batches:
        return f"total_iters={sched.total_iters}"
    return None
