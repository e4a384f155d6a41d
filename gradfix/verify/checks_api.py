"""Contracts of the API rules that build the changed module (GF303, GF304, GF306); `checks.extra_checks` finds them.

- `registers-params` (GF303, GF304): the rewritten module registers what the original left out,
  and computes the same outputs and gradients otherwise.
- `checkpoint-grads` (GF306): with inputs that do not require grad, the block's parameters get
  gradients with `use_reentrant=False` where the reentrant version left them None.

The expression contracts (GF301, GF302) are in checks_expr. Facts behind them:
/work/shared/design/hazards.md ("Further hazards") and verification.md. On a CPU machine
`.to("cpu")`, `.cuda()` under the redirect and `.double()` in a float64 default are no-ops, so the
checks that need a real copy run in float32 and force device moves to copy.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn as nn

from .runtime import (
    SEED_RUN, Outcome, Untestable, flatten, fmt_exc, is_gpu_error, plural, projected_loss, rel_diff, seeded,
)
from .context import Ctx, fixture_hint
from .inputs import _candidate_inputs, _first_known_leaf, _fresh_inputs, infer_input, required_params
from .unit_build import _build, infer_unit_input
from .units import combine, plan_units
from .checks_expr import TOL_F32, _default_dtype, _quiet


# --------------------------------------------------------------------------- registers-params (GF303, GF304)


def _is_device(a: Any) -> bool:
    return isinstance(a, (str, torch.device))


class ForceDeviceCopy(torch.overrides.TorchFunctionMode):
    """Device moves that return the tensor itself on this machine (`.to("cpu")` of a CPU tensor,
    `.cuda()` under the redirect) return a copy instead, as they do on a GPU."""

    def __init__(self) -> None:
        super().__init__()
        self.forced = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        out = func(*args, **kwargs)
        if args and out is args[0] and torch.is_tensor(out):
            move = func is torch.Tensor.cuda or (
                func is torch.Tensor.to and (any(_is_device(a) for a in args[1:]) or "device" in kwargs))
            if move:
                self.forced += 1
                return out.clone()
        return out


def _tensors_of(obj: Any) -> list:
    """The tensors an attribute holds, in order: a tensor, a module's state, containers of them."""
    if torch.is_tensor(obj):
        return [obj]
    if isinstance(obj, nn.Module) and not isinstance(obj, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
        return list(obj.state_dict(keep_vars=True).values())
    if isinstance(obj, (nn.ModuleDict, dict)):
        return [t for v in obj.values() for t in _tensors_of(v)]
    if isinstance(obj, (nn.ModuleList, nn.Sequential, list, tuple)):
        return [t for v in obj for t in _tensors_of(v)]
    return []


def _modules_of(obj: Any) -> list:
    if isinstance(obj, nn.Module):
        return [obj]
    if isinstance(obj, dict):
        return [m for v in obj.values() for m in _modules_of(v)]
    if isinstance(obj, (list, tuple)):
        return [m for v in obj for m in _modules_of(v)]
    return []


def _param_shape_inputs(models: list, dtype: torch.dtype) -> list[tuple]:
    """Input candidates for modules whose first op is `x @ self.w` on a raw parameter (in its dtype)."""
    shapes: list[tuple] = []
    for m in models:
        for t in list(m.parameters()) + [v for v in vars(m).values() if torch.is_tensor(v)]:
            dt = t.dtype if t.is_floating_point() else dtype
            if t.dim() == 2:
                shapes += [((4, t.shape[0]), dt), ((4, t.shape[1]), dt)]
            elif t.dim() == 1:
                shapes.append(((4, t.shape[0]), dt))
    out = []
    for shape, dt in dict.fromkeys(shapes):
        g = torch.Generator().manual_seed(1234)
        out.append((torch.randn(shape, generator=g, dtype=dt),))
    return out


def _infer(name: str, old: nn.Module, new: nn.Module, dtype: torch.dtype, explain) -> tuple:
    """Like `checks.infer_input`, without deep copies (the original may hold non-leaf tensors, which
    cannot be deep-copied), and with candidates from raw parameter shapes (`x @ self.w`)."""
    req = required_params(type(old).forward, skip_first=True)
    if len(req) != 1:
        return infer_input(name, [old, new], dtype, explain)  # () or its "several arguments" message
    makers = []
    owner = new if _first_known_leaf(new) is not None else old
    leaf = _first_known_leaf(owner)
    if leaf is not None:
        makers += _candidate_inputs(leaf, dtype, owner)
    makers += [lambda c=c: c for c in _param_shape_inputs([new, old], dtype)]
    last: BaseException | None = None
    for make in makers:
        cand = make()
        try:
            with torch.no_grad(), seeded(SEED_RUN), _quiet():
                for m in (old, new):
                    m.eval()(*_fresh_inputs(list(cand)))
            return cand
        except Exception as e:  # noqa: BLE001
            last = e
    raise Untestable(f"input shape unknown for {name}: forward failed on every input inferred from its first layer "
                     f"and parameter shapes (last error {fmt_exc(last) if last else 'none'}); " + fixture_hint(name))


def _leaves(inputs: tuple, requires_grad: bool = True) -> list:
    """Input leaves in their own dtype (float inputs require grad unless told otherwise)."""
    out = []
    for x in inputs:
        if torch.is_tensor(x) and x.is_floating_point():
            out.append(x.detach().clone().requires_grad_(requires_grad))
        elif torch.is_tensor(x):
            out.append(x.detach().clone())
        else:
            out.append(x)
    return out


def _forward_grads(model: nn.Module, leaves: list, mode: str, loose: list, call=None) -> tuple[list, dict, list]:
    """Outputs, parameter gradients (None where autograd gives none) and input gradients of one run
    with the projected test loss; `call` replaces `model(...)` (e.g. `model.forward`)."""
    model.train(mode == "train")
    for m in loose:  # modules `model.train()` does not reach (the original's plain containers)
        m.train(mode == "train")
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    ins = [x for x in leaves if torch.is_tensor(x) and x.requires_grad]
    for t in [p for _, p in named] + ins:
        t.grad = None
    with seeded(SEED_RUN), _quiet():
        xs = _fresh_inputs(leaves)
        out = flatten((call or model)(*xs))
        loss = projected_loss(out)
        if loss is not None and loss.requires_grad:
            loss.backward()  # not autograd.grad: the reentrant checkpoint does not support it
    grads = [None if t.grad is None else t.grad.detach().clone() for t in [p for _, p in named] + ins]
    for t in [p for _, p in named] + ins:
        t.grad = None
    outs = [o.detach().clone() if torch.is_tensor(o) else o for o in out]
    return outs, {n: g for (n, _), g in zip(named, grads[: len(named)])}, grads[len(named):]


def check_registers_params(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    name = c.get("class") or (ctx.analysis.changed_classes[0] if ctx.analysis.changed_classes else None)
    attrs = [str(a) for a in (c.get("attrs") or [])]
    if not name or not attrs:
        return Outcome("untestable", "registers-params contract without class/attrs", name)
    dtype = torch.float32
    force = ForceDeviceCopy()

    def building():
        return _stacked(_quiet(), _default_dtype(dtype), force)

    built = _build_both(ctx, name, building)
    if isinstance(built, Outcome):
        return built
    (old, old_in), (new, _) = built["old"], built["new"]
    if not isinstance(old, nn.Module) or not isinstance(new, nn.Module):
        return Outcome("untestable", f"{name} did not build an nn.Module", name)
    po, pn = dict(old.named_parameters()), dict(new.named_parameters())
    lost = sorted(set(po) - set(pn))
    if lost:
        return Outcome("failed", f"the rewrite loses parameters: {', '.join(lost[:3])}", name)
    mine = lambda n: any(n == a or n.startswith(a + ".") for a in attrs)  # noqa: E731
    already = [n for n in po if mine(n)]
    gained = [n for n in pn if n not in po]
    gained_here = [n for n in gained if mine(n)]
    if not gained_here:
        if already:
            return Outcome("failed", f"the original already registers {', '.join(already[:3])} here, so the rewrite "
                           f"changes nothing that can be shown", name)
        return Outcome("failed", f"the rewrite registers no parameter under {', '.join(attrs)}", name)
    so, sn = old.state_dict(), new.state_dict()
    if set(so) - set(sn):
        return Outcome("failed", f"the rewrite's state_dict lacks {sorted(set(so) - set(sn))[:3]}", name)
    mo, mn = dict(old.named_modules()), dict(new.named_modules())
    if set(mo) - set(mn):
        return Outcome("failed", f"the rewrite loses submodules {sorted(set(mo) - set(mn))[:3]}", name)
    # the attribute's values: equal after the same seeded construction (else copied, and said)
    copied = []
    for a in attrs:
        to, tn = _tensors_of(getattr(old, a, None)), _tensors_of(getattr(new, a, None))
        if len(to) != len(tn) or any(tuple(x.shape) != tuple(y.shape) for x, y in zip(to, tn)):
            return Outcome("failed", f"`{a}` holds different tensors in the two versions ({len(to)} vs {len(tn)})", name)
        for x, y in zip(to, tn):
            if rel_diff(x, y) > 0:
                with torch.no_grad():
                    y.copy_(x)
                copied.append(a)
    try:
        new.load_state_dict(so, strict=False)
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"copying the common weights of {name} failed ({fmt_exc(e)})", name)
    loose = [m for a in attrs for m in _modules_of(getattr(old, a, None)) if not any(m is x for x in mo.values())]
    n_new_keys = len(set(sn) - set(so))
    reg = (f"now registered: {plural(len(po), 'parameter')} -> {len(pn)} ({_names(gained_here)}); state_dict gains "
           f"{plural(n_new_keys, 'key')}; the original's parameters(), what an optimizer is given, lacks them, so "
           f"they are never trained")
    notes = []
    if force.forced:
        notes.append("On this machine `.to(device)`/`.cuda()` of a CPU tensor returns the tensor itself, so "
                     f"construction ran with such moves forced to copy, as on a GPU ({plural(force.forced, 'move')})")
    if copied:
        notes.append(f"the values of {', '.join(dict.fromkeys(copied))} differed after construction and were copied")
    try:
        inputs = old_in if old_in is not None else _infer(name, old, new, dtype, ctx.explain)
    except Untestable as u:
        notes.append(f"forward not compared: {u}")
        return Outcome("fixes-hazard", _sentence(reg) + " " + " ".join(_sentence(n) for n in notes), name)
    leaves = _leaves(inputs)
    worst, where = 0.0, ""
    got_grad: list[str] = []
    for mode in ("eval", "train"):
        try:
            o_out, o_g, o_ig = _forward_grads(old, leaves, mode, loose)
        except Exception as e:  # noqa: BLE001
            if is_gpu_error(e):
                return Outcome("untestable", f"needs GPU: {name} raises {fmt_exc(e)}", name)
            notes.append(f"forward not compared: the original raises {fmt_exc(e)} ({mode} mode)")
            return Outcome("fixes-hazard", _sentence(reg) + " " + " ".join(_sentence(n) for n in notes), name)
        try:
            n_out, n_g, n_ig = _forward_grads(new, leaves, mode, [])
        except Exception as e:  # noqa: BLE001
            return Outcome("failed", f"new version raises {ctx.explain(e, name)} ({mode} mode), while the original runs",
                           name)
        if len(o_out) != len(n_out):
            return Outcome("failed", f"the number of outputs changes ({mode} mode)", name)
        d, w = _largest_diff(o_out, n_out, o_ig, n_ig, f"{mode} mode")
        if d > worst:
            worst, where = d, w
        for n, g in o_g.items():
            d = rel_diff(g, n_g.get(n))
            if d > worst:
                worst, where = d, f"grad of {n} ({mode} mode)"
        got_grad += [n for n in gained_here if n_g.get(n) is not None]
    if worst > TOL_F32:
        return Outcome("failed", f"{reg}, but {where} differs: norm-relative {worst:.1e}", name)
    got = list(dict.fromkeys(got_grad))
    grads = (f"{plural(len(got), 'new parameter')} now receive{'s' if len(got) == 1 else ''} gradients" if got
             else "the new parameters get no gradient from forward (unused there or frozen)")
    common = f"outputs and the gradients of {plural(len(po), 'common parameter')}" if po else "outputs and input gradients"
    detail = (f"{reg}; {common} agree in eval and train mode (fp32, largest norm-relative difference {worst:.1e}); "
              f"{grads}.")
    if loose:
        detail += (f" The original's {plural(len(loose), 'unregistered module')} were switched to eval/train by hand, "
                   f"which `model.eval()` does not do.")
    if notes:
        detail += " " + " ".join(_sentence(n) for n in notes)
    return Outcome("fixes-hazard", detail, name)


def _names(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _sentence(s: str) -> str:
    s = s.strip()
    return s if s.endswith(".") else s + "."


# --------------------------------------------------------------------------- shared: two built versions


def _build_pair(ctx: Ctx, name: str) -> tuple[nn.Module, nn.Module, tuple | None] | Outcome:
    """Both versions of a changed module class, in the check dtype, weights copied old -> new."""
    built = _build_both(ctx, name, _quiet)
    if isinstance(built, Outcome):
        return built
    (old, old_in), (new, _) = built["old"], built["new"]
    if not isinstance(old, nn.Module) or not isinstance(new, nn.Module):
        return Outcome("untestable", f"{name} did not build an nn.Module", name)
    old.to(ctx.dtype)
    new.to(ctx.dtype)
    try:
        new.load_state_dict(old.state_dict())
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"state mapping needed: copying the weights of {name} failed ({fmt_exc(e)})", name)
    return old, new, old_in


# --------------------------------------------------------------------------- checkpoint-grads (GF306)


def check_checkpoint_grads(ctx: Ctx) -> Outcome:
    units, outcomes = plan_units(ctx)
    for u in units:
        outcomes.append(_checkpoint_unit(ctx, u))
    return combine(outcomes)


def _checkpoint_unit(ctx: Ctx, name: str) -> Outcome:
    pair = _build_pair(ctx, name)
    if isinstance(pair, Outcome):
        return pair
    old, new, old_in = pair
    try:
        inputs = old_in if old_in is not None else infer_unit_input(ctx, name, old, new)
    except Untestable as u:
        return Outcome("untestable", str(u), name)
    worst, where = 0.0, ""
    gained: dict[str, str] = {}
    runs = 0
    for rg in (True, False):
        leaves = _leaves(tuple(x.to(ctx.dtype) if torch.is_tensor(x) and x.is_floating_point() else x
                               for x in inputs), requires_grad=rg)
        label = "inputs that require grad" if rg else "inputs that do not require grad"
        for mode in ("eval", "train"):
            try:
                o_out, o_g, o_ig = _forward_grads(old, leaves, mode, [])
            except Exception as e:  # noqa: BLE001
                return Outcome("untestable", f"the original raises {ctx.explain(e, name)} ({mode} mode, {label})", name)
            try:
                n_out, n_g, n_ig = _forward_grads(new, leaves, mode, [])
            except Exception as e:  # noqa: BLE001
                return Outcome("failed", f"new version raises {ctx.explain(e, name)} ({mode} mode, {label}), while the "
                               f"original runs", name)
            runs += 1
            if len(o_out) != len(n_out):
                return Outcome("failed", f"the number of outputs changes ({mode} mode)", name)
            d, w = _largest_diff(o_out, n_out, o_ig, n_ig, f"{mode} mode, {label}")
            if d > worst:
                worst, where = d, w
            for p, a in o_g.items():
                b = n_g.get(p)
                if a is None and b is not None:
                    gained.setdefault(p, label)
                elif a is not None and b is None:
                    return Outcome("failed", f"the gradient of {p} is a tensor in the original but None in the rewrite "
                                   f"({mode} mode, {label})", name)
                elif a is not None:
                    d = rel_diff(a, b)
                    if d > worst:
                        worst, where = d, f"grad of {p} ({mode} mode, {label})"
    if worst > ctx.tol:
        return Outcome("failed", f"{where} differs: norm-relative {worst:.1e}", name)
    agree = (f"outputs and every gradient the original computed agree (fp64, eval and train mode, inputs with and "
             f"without requires_grad; largest norm-relative difference {worst:.1e})")
    if gained:
        names = list(gained)
        return Outcome("fixes-hazard", f"with inputs that do not require grad, the reentrant original leaves the "
                       f"gradients of {_names(names)} None; with use_reentrant=False they are tensors; {agree}", name)
    return Outcome("equivalent", f"{agree}; no gradient was lost by the reentrant variant here", name)


CHECKS = {
    "registers-params": check_registers_params,
    "checkpoint-grads": check_checkpoint_grads,
}


def _stacked(*managers):
    """One context manager entering `managers` in order."""
    stack = contextlib.ExitStack()
    for m in managers:
        stack.enter_context(m)
    return stack


def _build_both(ctx, name: str, context) -> "dict[str, Any] | Outcome":
    """The original and the rewritten unit `name`, each built inside `context()`; an Outcome
    (untestable or failed, with the reason) when either cannot be built."""
    built: dict[str, Any] = {}
    for tag in ("old", "new"):
        with _quiet():
            mod = ctx.module(tag)
        try:
            with context():
                built[tag] = _build(ctx, name, mod)
        except Untestable as u:
            return Outcome("untestable", str(u), name)
        except Exception as e:  # noqa: BLE001
            if is_gpu_error(e):
                return Outcome("untestable", f"needs GPU: constructing {name} raises {fmt_exc(e)}", name)
            if tag == "old":
                why = ctx.explain(e, name)
                hint = "" if "fixture_" in why else "; " + fixture_hint(name)
                return Outcome("untestable", f"constructing the original {name} raises {why}{hint}", name)
            return Outcome("failed", f"new version raises {ctx.explain(e, name)} when constructing {name}", name)
    return built


def _largest_diff(o_out, n_out, o_ig, n_ig, context: str) -> tuple[float, str]:
    """The largest norm-relative difference over outputs and input gradients, and where."""
    worst, where = 0.0, ""
    for i, (a, b) in enumerate(zip(o_out, n_out)):
        d = rel_diff(a, b)
        if d > worst:
            worst, where = d, f"output {i} ({context})"
    for a, b in zip(o_ig, n_ig):
        d = rel_diff(a, b)
        if d > worst:
            worst, where = d, f"input grad ({context})"
    return worst, where
