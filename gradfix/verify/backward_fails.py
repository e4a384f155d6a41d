"""GF305 on a module whose own backward raises: `naf.forward(z)` where forward writes `x[:, i] = ...` into a tensor
its conditioner read, so every backward through it fails (the module's bug, not the call form's).

The forward-call check compares outputs and gradients of `m.forward(x)` and `m(x)`; with no gradient to compare it
was `untestable`. Both calls run the same forward when no hook is registered, so the check can still show what the
change does on that input: the outputs of the two calls (eval and train mode, under one seed) and the error each
backward raises. Only when the forward itself runs in both, the outputs agree and both backwards raise the same
exception (type and message) is the verdict `equivalent`, and its detail says that gradients were not compared and
why. Anything else (the forward raising, one backward succeeding, messages that differ, outputs that differ) leaves
the caller's `untestable` reason as it was: a difference there may be a hook, and this check does not judge hooks.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from .runtime import SEED_RUN, Outcome, fmt_exc, flatten, plural, projected_loss, rel_diff, seeded
from .inputs import _fresh_inputs


def _run(call, leaves: list, kwargs_fresh) -> tuple[list | None, BaseException | None, BaseException | None]:
    """(outputs, forward error, backward error) of one seeded run with the projected test loss."""
    from .checks_expr import _quiet

    with seeded(SEED_RUN), _quiet():
        try:
            out = flatten(call(*_fresh_inputs(leaves), **kwargs_fresh()))
        except Exception as e:  # noqa: BLE001
            return None, e, None
        outs = [o.detach().clone() for o in out if torch.is_tensor(o)]
        loss = projected_loss(out)
        if loss is None or not loss.requires_grad:
            return outs, None, None
        try:
            loss.backward()
        except Exception as e:  # noqa: BLE001
            return outs, None, e
    return outs, None, None


def _clear(model: nn.Module, leaves: list) -> None:
    for p in model.parameters():
        p.grad = None
    for x in leaves:
        if torch.is_tensor(x):
            x.grad = None


def same_failure(model: nn.Module, leaves: list, kwargs_fresh, recv: str, unit: str, how: str,
                 tol: float) -> Outcome | None:
    """`equivalent` when `recv.forward(x)` and `recv(x)` give the same outputs and their backwards raise the same
    exception, in eval and train mode; None otherwise (the caller keeps its reason)."""
    worst, error = 0.0, None
    for mode in ("eval", "train"):
        model.train(mode == "train")
        _clear(model, leaves)
        f_out, f_fwd, f_bwd = _run(model.forward, leaves, kwargs_fresh)
        _clear(model, leaves)
        c_out, c_fwd, c_bwd = _run(model, leaves, kwargs_fresh)
        _clear(model, leaves)
        if f_fwd is not None or c_fwd is not None or f_bwd is None or c_bwd is None:
            return None
        if type(f_bwd) is not type(c_bwd) or str(f_bwd) != str(c_bwd):
            return None
        if len(f_out) != len(c_out):
            return None
        for a, b in zip(f_out, c_out):
            worst = max(worst, rel_diff(a, b))
        error = f_bwd
    if worst > tol or error is None:
        return None
    seen: list[int] = []
    handle = model.register_forward_hook(lambda *a: seen.append(1))
    try:
        with torch.no_grad(), seeded(SEED_RUN):
            model.forward(*_fresh_inputs(leaves), **kwargs_fresh())
            direct = len(seen)
            model(*_fresh_inputs(leaves), **kwargs_fresh())
            called = len(seen) - direct
    except Exception:  # noqa: BLE001 - it ran above; a failure here is no evidence either way
        return None
    finally:
        handle.remove()
    prec = "fp64" if leaves and torch.is_tensor(leaves[0]) and leaves[0].dtype == torch.float64 else "the check's dtype"
    return Outcome("equivalent", f"{how}: `{recv}(x)` equals `{recv}.forward(x)` in outputs (eval and train mode, "
                   f"{prec}, largest norm-relative difference {worst:.1e}); gradients were not compared: the backward "
                   f"of both raises the same {fmt_exc(error)} (the module's own code, in either call form); a test "
                   f"forward hook ran {plural(called, 'time')} through `{recv}(x)` and {plural(direct, 'time')} "
                   f"through `{recv}.forward(x)`", unit)
