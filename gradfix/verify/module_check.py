"""The module check: build both versions of a unit, run forward and backward, compare every effect."""
from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn as nn

from .runtime import (
    SEED_RUN, TOL32, TOL64, Outcome, Untestable, _RetryFp32, _norm, _same_error, _short_version_msg,
    flatten, fmt_exc, is_download_error, is_dtype_error, is_gpu_error, is_version_error, plural, projected_loss,
    _sentence, rel_diff, seeded,
)
from .context import Ctx, fixture_hint
from .api import verdict_rank
from .hazards import update_hazard
from .unit_build import _build, infer_unit_input
from .inputs import (
    OTHER_BATCHES, _fresh_inputs, has_lazy, input_leaves, make_leaves, rebatch,
)


# --------------------------------------------------------------------------- runs


@dataclass
class Run:
    outputs: list
    grads: dict  # param name -> tensor | None
    input_grads: list
    buffers: dict
    # what the call left behind besides its result: parameters (and any .grad) after the call,
    # every tensor argument, and the state of module/optimizer arguments (label -> tensor | None)
    effects: dict = field(default_factory=dict)
    attr_versions: dict = field(default_factory=dict)  # tensor attribute -> its version counter after the call


def _snapshot(obj: Any, label: str, acc: dict, depth: int = 0) -> None:
    """Every tensor `obj` holds, cloned, under readable labels (arguments and their state)."""
    if depth > 3:
        return
    if torch.is_tensor(obj):
        acc[label] = obj.detach().clone()
    elif isinstance(obj, nn.Module):
        for n, p in obj.named_parameters():
            acc[f"{label} parameter {n}"] = p.detach().clone()
            if p.grad is not None:
                acc[f"{label} {n}.grad"] = p.grad.detach().clone()
        for n, b in obj.named_buffers():
            acc[f"{label} buffer {n}"] = b.detach().clone()
    elif isinstance(obj, torch.optim.Optimizer):
        for gi, g in enumerate(obj.param_groups):
            lr = g.get("lr")
            if isinstance(lr, (int, float)) or torch.is_tensor(lr):
                acc[f"{label} lr of group {gi}"] = torch.as_tensor(float(lr), dtype=torch.float64)
        for pi, st in enumerate(obj.state.values()):
            for k, v in st.items():
                if torch.is_tensor(v):
                    acc[f"{label} state {k} of parameter {pi}"] = v.detach().clone()
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _snapshot(v, f"{label}[{i}]", acc, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _snapshot(v, f"{label}[{k!r}]", acc, depth + 1)


def _effects(m: Any, xs: list) -> dict:
    acc: dict = {}
    if isinstance(m, nn.Module):
        for n, p in m.named_parameters():
            acc[f"parameter {n} after the call"] = p.detach().clone()
            if p.grad is not None:
                acc[f"{n}.grad after the call"] = p.grad.detach().clone()
        for n, v in _tensor_attributes(m).items():
            acc[f"tensor attribute {n} after the call"] = v
    multi = len(xs) > 1
    for i, x in enumerate(xs):
        _snapshot(x, f"argument {i}" if multi else "the argument", acc)
    return acc


def _tensor_attributes(m: nn.Module, live: bool = False) -> dict:
    """Tensors stored on submodules as plain attributes (not parameters or buffers); cloned unless `live`."""
    out = {}
    for prefix, sub in m.named_modules():
        for k, v in vars(sub).items():
            if torch.is_tensor(v) and not isinstance(v, nn.Parameter) and not k.startswith("_"):
                out[f"{prefix}.{k}" if prefix else k] = v if live else v.detach().clone()
    return out


def run_once(obj: Any, leaves: list, mode: str, allow_mutation: bool = False, only: list[int] | None = None) -> Run:
    """One forward + backward of the projected test loss; grads w.r.t. params and input leaves.

    `only`: indices of the (flattened) outputs that enter the test loss (default: all).
    """
    restore = None
    if isinstance(obj, nn.Module):
        try:
            m = copy.deepcopy(obj)
        except Exception:
            m = obj
            restore = {k: v.detach().clone() for k, v in obj.state_dict().items()}
        m.train(mode == "train")
        named = [(n, p) for n, p in m.named_parameters() if p.requires_grad]
    else:
        m = obj
        named = []
    ctx = torch.autograd.graph.allow_mutation_on_saved_tensors() if allow_mutation else contextlib.nullcontext()
    try:
        with seeded(SEED_RUN), ctx:
            xs = _fresh_inputs(leaves)
            out = m(*xs)
            outs = flatten(out)
            loss = projected_loss(outs if only is None else [o if i in only else None for i, o in enumerate(outs)])
            in_leaves = input_leaves(leaves)
            targets = [p for _, p in named] + in_leaves
            if loss is not None and loss.requires_grad and targets:
                grads = list(torch.autograd.grad(loss, targets, allow_unused=True))
            else:
                grads = [None] * len(targets)
        outputs = [o.detach().clone() if torch.is_tensor(o) else o for o in outs]
        pgrads = {n: g for (n, _), g in zip(named, grads[: len(named)])}
        igrads = grads[len(named):]
        buffers = {n: b.detach().clone() for n, b in m.named_buffers()} if isinstance(m, nn.Module) else {}
        versions = {k: int(getattr(v, "_version", 0)) for k, v in _tensor_attributes(m, live=True).items()} \
            if isinstance(m, nn.Module) else {}
        return Run(outputs, pgrads, igrads, buffers, _effects(m, xs), versions)
    finally:
        if restore is not None:
            obj.load_state_dict(restore)


def compare_runs(o: Run, n: Run, mode: str, scale: float | None = None) -> list[tuple[float, str]]:
    """(norm-relative difference, description) for every tensor; `scale`: expect n = scale * o for grads."""
    out: list[tuple[float, str]] = []
    where = f"({mode} mode)" if mode != "call" else ""

    def add(rel: float, label: str, none_note: str | None = None) -> None:
        if none_note is not None:
            out.append((math.inf, f"{none_note} {where}".strip()))
        else:
            out.append((rel, f"{label} differs: norm-relative {rel:.1e} {where}".strip()))

    if scale is None:
        if len(o.outputs) != len(n.outputs):
            out.append((math.inf, f"the number of outputs differs: {len(o.outputs)} vs {len(n.outputs)} {where}".strip()))
        else:
            for i, (a, b) in enumerate(zip(o.outputs, n.outputs)):
                if torch.is_tensor(a) and torch.is_tensor(b) and tuple(a.shape) != tuple(b.shape):
                    out.append((math.inf, f"output {i} changes shape from {tuple(a.shape)} to {tuple(b.shape)} {where}".strip()))
                else:
                    add(rel_diff(a, b), f"output {i}")
    s = 1.0 if scale is None else scale
    def grads(label: str, a, b) -> None:
        if a is None and b is None:
            return
        if a is None or b is None:
            add(math.inf, "", f"{label} is {'None' if a is None else 'a tensor'} in the original "
                f"but {'None' if b is None else 'a tensor'} in the rewrite")
        else:
            add(rel_diff(a * s, b), label)

    for name in list(o.grads) + [k for k in n.grads if k not in o.grads]:
        if name not in o.grads or name not in n.grads:
            out.append((math.inf, f"parameter {name} exists in only one version {where}".strip()))
        else:
            grads(f"grad of {name}", o.grads[name], n.grads[name])
    multi = len(o.input_grads) > 1
    for i, (a, b) in enumerate(zip(o.input_grads, n.input_grads)):
        grads(f"input {i} grad" if multi else "input grad", a, b)
    for name in set(o.buffers) | set(n.buffers):
        if name not in o.buffers or name not in n.buffers:
            out.append((math.inf, f"buffer {name} exists in only one version {where}".strip()))
        else:
            add(rel_diff(o.buffers[name], n.buffers[name]), f"buffer {name}")
    for name in list(o.effects) + [k for k in n.effects if k not in o.effects]:
        if name not in o.effects or name not in n.effects:
            out.append((math.inf, f"{name} exists in only one version {where}".strip()))
        else:
            add(rel_diff(o.effects[name], n.effects[name]), name)
    return out


# --------------------------------------------------------------------------- module check


def module_check(ctx: Ctx, name: str, scale: float | None = None) -> Outcome:
    try:
        return _module_check(ctx, name, scale)
    except _RetryFp32:
        pass
    ctx.dtype, ctx.tol = torch.float32, TOL32
    torch.set_default_dtype(torch.float32)
    try:
        out = _module_check(ctx, name, scale)
        if out.verdict != "untestable":
            ctx.weak_units.append(name)
        return out
    except _RetryFp32:
        return Outcome("untestable", f"{name} raises dtype errors in fp64 and in fp32", name)
    finally:
        ctx.dtype, ctx.tol = torch.float64, TOL64
        torch.set_default_dtype(torch.float64)


def _module_check(ctx: Ctx, name: str, scale: float | None) -> Outcome:
    built: dict[str, Any] = {}
    errs: dict[str, BaseException] = {}
    for tag in ("old", "new"):
        mod = ctx.module(tag)
        try:
            built[tag] = _build(ctx, name, mod)
        except Untestable as u:
            return Outcome("untestable", str(u), name)
        except Exception as e:  # noqa: BLE001 - user code
            errs[tag] = e
    if errs:
        if any(is_gpu_error(e) for e in errs.values()):
            e = next(iter(errs.values()))
            return Outcome("untestable", f"needs GPU: constructing {name} raises {fmt_exc(e)}", name)
        if "old" not in errs:
            return Outcome("failed", f"new version raises {ctx.explain(errs['new'], name)} when constructing {name}", name)
        e = errs["old"]
        why = ctx.explain(e, name)
        hint = "" if "fixture_" in why else "; " + fixture_hint(name)
        if is_download_error(e):
            return Outcome("untestable", f"needs downloaded weights: constructing {name} raises {why} (no network "
                           f"here){hint}", name)
        if "new" not in errs:
            return Outcome("untestable", f"constructing the original {name} raises {why}{hint}", name)
        return Outcome("untestable", f"constructing {name} raises {why} in both versions{hint}", name)

    (old, old_in), (new, _) = built["old"], built["new"]
    is_module = isinstance(old, nn.Module) and isinstance(new, nn.Module)
    if not callable(old) or not callable(new):
        return Outcome("untestable", f"fixture_{name} did not return a callable unit", name)
    if is_module:
        old.to(ctx.dtype)
        new.to(ctx.dtype)

    try:
        inputs = old_in if old_in is not None else infer_unit_input(ctx, name, old, new)
    except Untestable as u:
        return Outcome("untestable", str(u), name)
    leaves = make_leaves(inputs, ctx.dtype)

    if is_module:
        if has_lazy(old) or has_lazy(new):
            for m in (old, new):
                try:
                    with torch.no_grad(), seeded(SEED_RUN):
                        m.eval()(*_fresh_inputs(leaves))
                except Exception:  # noqa: BLE001 - reported by the real runs below
                    pass
                m.to(ctx.dtype)
        sd_old, sd_new = old.state_dict(), new.state_dict()
        if set(sd_old) != set(sd_new):
            only_o = sorted(set(sd_old) - set(sd_new))[:3]
            only_n = sorted(set(sd_new) - set(sd_old))[:3]
            return Outcome(
                "untestable",
                f"state mapping needed: the state_dict keys of {name} differ (original only: {only_o}, rewrite only: "
                f"{only_n}), so the weights cannot be copied from one version to the other",
                name,
            )
        bad = [k for k in sd_old if torch.is_tensor(sd_old[k]) and tuple(sd_old[k].shape) != tuple(sd_new[k].shape)]
        if bad:
            return Outcome(
                "untestable",
                f"state mapping needed: {bad[0]} has shape {tuple(sd_old[bad[0]].shape)} in the original and "
                f"{tuple(sd_new[bad[0]].shape)} in the rewrite",
                name,
            )
        built_diff = _construction_difference(ctx, old, new, sd_old, sd_new)
        if built_diff is not None:
            return Outcome("failed", f"constructing {name} gives a different module: {built_diff} (the two "
                           f"constructions are compared under one seed, before any state is copied)", name)
        try:
            new.load_state_dict(sd_old)
        except Exception as e:  # noqa: BLE001
            return Outcome("untestable", f"state mapping needed: copying the weights of {name} failed ({fmt_exc(e)})", name)

    first = _judge(ctx, name, old, new, leaves, is_module, scale)
    if not ctx.uncovered() or first.verdict == "untestable" and not first.detail.startswith("both versions raise"):
        return first
    # A changed line did not run on this input: try other batch sizes before giving up (the final
    # coverage verdict is the caller's, over every run)
    outcomes = [first]
    for n in OTHER_BATCHES:
        alt = rebatch(tuple(inputs), n)
        if alt is None:
            continue
        try:
            outcomes.append(_judge(ctx, name, old, new, make_leaves(alt, ctx.dtype), is_module, scale, batch=n))
        except _RetryFp32:
            continue
        if not ctx.uncovered():
            break
    tested = [o for o in outcomes if o.verdict != "untestable"]
    if not tested:
        return first
    worst = max(tested, key=lambda o: verdict_rank(o.verdict))
    sizes = sorted(({_batch_of(inputs)} | set(OTHER_BATCHES[:len(outcomes) - 1])) - {None})
    return Outcome(worst.verdict, _sentence(worst.detail) + f" Inputs tried with batch sizes "
                   f"{', '.join(map(str, sizes))} so that the changed code runs.", name)


def _batch_of(inputs) -> int | None:
    for x in inputs:
        if type(x) is dict:  # a dict batch: its values
            found = _batch_of(tuple(x.values()))
            if found is not None:
                return found
        if torch.is_tensor(x) and x.dim() >= 2:
            return int(x.shape[0])
    return None


def _construction_difference(ctx: Ctx, old: nn.Module, new: nn.Module, sd_old: dict, sd_new: dict) -> str | None:
    """What differs between the two freshly built modules (state_dict and plain tensor attributes)."""
    for k in sd_old:
        a, b = sd_old[k], sd_new[k]
        if torch.is_tensor(a) and torch.is_tensor(b):
            d = rel_diff(a, b)
            if d > ctx.tol:
                return f"{k} differs after construction, norm-relative {d:.1e}"
    ta, tb = _tensor_attributes(old), _tensor_attributes(new)
    for k in set(ta) | set(tb):
        if k not in ta or k not in tb:
            return f"the tensor attribute {k} exists in only one version after construction"
        d = rel_diff(ta[k], tb[k])
        if d > ctx.tol:
            return f"the tensor attribute {k} differs after construction, norm-relative {d:.1e}"
    return None


def _judge(ctx: Ctx, name: str, old: Any, new: Any, leaves: list, is_module: bool, scale: float | None,
           batch: int | None = None) -> Outcome:
    """Run both versions on `leaves` (eval and train, or one call) and judge the difference."""
    modes = ("eval", "train") if is_module else ("call",)
    runs: dict[str, dict[str, Any]] = {"old": {}, "new": {}}
    for mode in modes:
        for tag, obj in (("old", old), ("new", new)):
            try:
                runs[tag][mode] = run_once(obj, leaves, mode)
            except Exception as e:  # noqa: BLE001 - user code
                runs[tag][mode] = e

    all_errs = [r for t in runs.values() for r in t.values() if isinstance(r, BaseException)]
    old_errs = [r for r in runs["old"].values() if isinstance(r, BaseException)]
    if ctx.dtype == torch.float64 and any(is_dtype_error(e) for e in old_errs):
        raise _RetryFp32()  # the original itself does not run in fp64 (hard-coded float32 tensors)
    if any(is_gpu_error(e) for e in all_errs):
        e = next(e for e in all_errs if is_gpu_error(e))
        return Outcome("untestable", f"needs GPU: {name} raises {fmt_exc(e)}", name)

    ref: dict[str, Run] = {}
    crash: dict[str, BaseException] = {}
    pending_untestable: Outcome | None = None
    for mode in modes:
        o, n = runs["old"][mode], runs["new"][mode]
        wm = f" ({mode} mode)" if mode != "call" else ""
        if isinstance(o, Run) and isinstance(n, Run):
            ref[mode] = o
        elif isinstance(o, Run):
            return Outcome("failed", f"new version raises {ctx.explain(n, name)}{wm}, while the original runs", name)
        elif isinstance(n, Run):
            if is_version_error(o):
                try:
                    ref[mode] = run_once(old, leaves, mode, allow_mutation=True)
                    crash[mode] = o
                except Exception as e2:  # noqa: BLE001
                    pending_untestable = pending_untestable or Outcome(
                        "untestable",
                        f"the original raises {fmt_exc(o)}{wm}, and rerunning it with mutation of saved tensors "
                        f"allowed raises {fmt_exc(e2)}, so there is no reference result for the rewrite",
                        name,
                    )
            else:
                pending_untestable = pending_untestable or Outcome(
                    "untestable",
                    f"the original raises {ctx.explain(o, name)}{wm} while the rewrite runs, so there is no reference "
                    f"result to compare the rewrite with",
                    name,
                )
        else:
            if is_version_error(o) and is_version_error(n):
                note = ""
                try:
                    ro = run_once(old, leaves, mode, allow_mutation=True)
                    rn = run_once(new, leaves, mode, allow_mutation=True)
                    worst_i = max((d[0] for d in compare_runs(ro, rn, mode)), default=0.0)
                    note = (
                        f"; with mutation of saved tensors allowed both compute the same result (norm-relative "
                        f"{worst_i:.1e}), so the rewrite keeps the intended gradient"
                        if worst_i <= ctx.tol
                        else f"; with mutation of saved tensors allowed they differ (norm-relative {worst_i:.1e})"
                    )
                except Exception:  # noqa: BLE001
                    pass
                pending_untestable = pending_untestable or Outcome(
                    "untestable",
                    f"both versions raise RuntimeError ({_short_version_msg(o)}){wm}, so there is no gradient to "
                    f"compare{note}; the in-place operation that breaks backward is still in the code (fix it first)",
                    name,
                )
            elif type(o) is type(n) and _same_error(o, n):
                why = ctx.explain(o, name)
                hint = "" if "fixture_" in why else " on the inferred input; " + fixture_hint(name)
                pending_untestable = pending_untestable or Outcome(
                    "untestable", f"both versions raise {why}{wm}{hint}", name
                )
            else:
                return Outcome(
                    "failed", f"new version raises {ctx.explain(n, name)}{wm}; the original raised {fmt_exc(o)}", name
                )
    if pending_untestable is not None:
        return pending_untestable

    if ctx.req.contract.get("ignore_attributes"):
        # compared with a reference the rule built (the original without the hazard): values stored on
        # the module for logging are meant to differ from it, outputs and gradients are not
        for r in list(ref.values()) + list(runs["new"].values()):
            r.effects = {k: v for k, v in r.effects.items() if not k.startswith("tensor attribute ")}
    diffs: list[tuple[float, str]] = []
    for mode in modes:
        diffs += compare_runs(ref[mode], runs["new"][mode], mode, scale)
    worst = max(diffs, key=lambda d: d[0]) if diffs else (0.0, "")
    mode_txt = " and ".join(modes) + (" mode" if is_module else "")
    n_params = len(ref[modes[0]].grads)
    n_bufs = len(ref[modes[0]].buffers)
    prec = "fp64" if ctx.dtype == torch.float64 else "fp32"

    if scale is not None:
        # Each output must be unchanged or scaled by the factor (a forward returning (logits, loss)
        # scales only the loss); the gradient check then uses the scaled outputs only.
        scaled: set[int] = set()
        for mode in modes:
            o_out, n_out = ref[mode].outputs, runs["new"][mode].outputs
            if len(o_out) != len(n_out):
                return Outcome("failed", f"the number of outputs changes from {len(o_out)} to {len(n_out)}", name)
            for i, (a, b) in enumerate(zip(o_out, n_out)):
                if not torch.is_tensor(a) or not a.is_floating_point():
                    continue
                if rel_diff(a * scale if torch.is_tensor(b) else a, b) <= ctx.tol and rel_diff(a, b) > ctx.tol:
                    scaled.add(i)
                elif rel_diff(a, b) > ctx.tol:
                    r = _norm(b) / _norm(a) if _norm(a) else math.inf
                    return Outcome(
                        "failed",
                        f"output {i} changes by x{r:.3g}, not x{scale:g} as the removed factor says, nor is it unchanged "
                        f"(norm-relative {rel_diff(a * scale, b):.1e} from x{scale:g}, {mode} mode)",
                        name,
                    )
        n_out = len(ref[modes[0]].outputs)
        if scaled and len(scaled) < sum(1 for o in ref[modes[0]].outputs if torch.is_tensor(o) and o.is_floating_point()):
            only = sorted(scaled)
            for mode in modes:
                ref[mode] = run_once(old, leaves, mode, allow_mutation=mode in crash, only=only)
                runs["new"][mode] = run_once(new, leaves, mode, only=only)
            diffs = [d for mode in modes for d in compare_runs(ref[mode], runs["new"][mode], mode, scale)]
            worst = max(diffs, key=lambda d: d[0]) if diffs else (0.0, "")
        which = "" if n_out <= 1 or not scaled else f" (through output{'s' if len(scaled) > 1 else ''} {', '.join(map(str, sorted(scaled)))})"
        olds = [g for m in modes for g in list(ref[m].grads.values()) + list(ref[m].input_grads) if g is not None]
        news = [g for m in modes for g in list(runs["new"][m].grads.values()) + list(runs["new"][m].input_grads) if g is not None]
        no, nn_ = math.sqrt(sum(_norm(g) ** 2 for g in olds)), math.sqrt(sum(_norm(g) ** 2 for g in news))
        if no == 0.0 and nn_ == 0.0:
            return Outcome("failed", f"{name} produces no gradient in either version, so the scale cannot be checked", name)
        if worst[0] <= ctx.tol:
            shown = f"gradients x{scale:g} exactly as the removed factor says{which} ({prec}, {mode_txt}, " \
                    f"{plural(n_params, 'parameter')}; largest norm-relative deviation {worst[0]:.1e})"
            params = dict(old.named_parameters()) if is_module else {}
            g0 = ref[modes[0]].grads
            hazard = update_hazard([g0[n] for n in g0 if n in params], [params[n] for n in g0 if n in params]) \
                if params else None
            if hazard is not None:
                return Outcome("fixes-hazard", f"{shown}; {hazard}, and the rewrite's are x{scale:g} larger", name)
            return Outcome("changes-behaviour", f"{shown}; no hazard shown: the original's gradients are large enough "
                           f"for Adam (above eps) and for float32 updates, so removing the factor changes the "
                           f"training, e.g. a sum-to-mean normalisation", name)
        ratio = nn_ / no if no else math.inf
        return Outcome(
            "failed",
            f"gradients change by x{ratio:.3g}, not x{scale:g} as the removed factor says (largest deviation from "
            f"x{scale:g}: {worst[1]})",
            name,
        )

    if worst[0] <= ctx.tol:
        if crash:
            e = next(iter(crash.values()))
            return Outcome(
                "fixes-crash",
                f"the original raises {type(e).__name__} ({_short_version_msg(e)}) in {' and '.join(crash)} mode; the "
                f"rewrite runs and equals the original's intended result (the original rerun with mutation of saved "
                f"tensors allowed; {prec}, largest norm-relative difference {worst[0]:.1e})",
                name,
            )
        ig = " and the input gradient" if any(g is not None for g in ref[modes[0]].input_grads) else ""
        return Outcome(
            "equivalent",
            f"outputs, gradients of {plural(n_params, 'parameter')}{ig} and {plural(n_bufs, 'buffer')} agree in {mode_txt} "
            f"({prec}, largest norm-relative difference {worst[0]:.1e})",
            name,
        )
    side = _side_value_outcome(ctx, name, modes, ref, runs["new"], diffs, crash)
    if side is not None:
        return side
    others = sum(1 for d in diffs if d[0] > ctx.tol) - 1
    more = f"; {others} more tensor{'s' if others != 1 else ''} differ" if others > 0 else ""
    if is_module and not crash:
        by_mode = {m: max((d[0] for d in compare_runs(ref[m], runs["new"][m], m, scale)), default=0.0) for m in modes}
        if by_mode.get("eval", 1.0) <= ctx.tol and by_mode.get("train", 0.0) > ctx.tol:
            more += " (eval mode agrees: the change affects train mode only, e.g. dropout draw order or batch statistics)"
    prefix = (
        f"the original raises {type(next(iter(crash.values()))).__name__} and the rewrite differs from its intended "
        f"result (the original rerun with mutation of saved tensors allowed): "
        if crash
        else ""
    )
    return Outcome("failed", f"{prefix}{worst[1]}{more}", name)




ATTR = "tensor attribute "


def _side_value_outcome(ctx: Ctx, name: str, modes: tuple, ref: dict, new_runs: dict, diffs: list,
                        crash: dict) -> Outcome | None:
    """Only tensors the forward stores on the module differ (outputs, gradients and buffers agree)."""
    differing = [d for d in diffs if d[0] > ctx.tol]
    if crash or not differing or not all(d[1].startswith(ATTR) for d in differing):
        return None
    names = sorted({d[1][len(ATTR):].split(" after the call")[0] for d in differing})
    shown = (f"outputs, gradients and buffers agree in {' and '.join(modes)} mode; only the tensor "
             f"attribute{'s' if len(names) > 1 else ''} {', '.join(names)} stored by the forward differ"
             f"{'s' if len(names) == 1 else ''} ({differing[0][1]})")
    aliased = []
    for n in names:
        vo = max(ref[m].attr_versions.get(n, 0) for m in modes)
        vn = max(new_runs[m].attr_versions.get(n, 0) for m in modes)
        if vo > vn:
            aliased.append((n, vo, vn))
    if len(aliased) == len(names):
        n, vo, vn = aliased[0]
        return Outcome("fixes-hazard", f"{shown}: in the original, {n} shares storage with a tensor changed in place "
                       f"after it was stored (its version counter reads {vo} after the forward, the rewrite's copy "
                       f"{vn}), so it does not hold the value it stored", name)
    return Outcome("changes-behaviour", f"{shown}; no hazard shown", name)
