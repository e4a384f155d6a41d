"""Whether the original SHOWS the hazard when run (`fixes-hazard`) or the rewrite only changes results
(`changes-behaviour`). Each test measures the original's own numbers; none trusts the rule's intent.

- `update_hazard`: the original's gradients are too small to train with: Adam's step dominated by
  its eps, or an SGD step (even at lr 0.1) below float32 resolution for most weights.
- `fd_discrepancy`: autograd's directional derivative against central finite differences of the
  same function (fp64): a write autograd cannot see (`.data`, an in-place op on a detached alias)
  makes them disagree.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
import torch.nn as nn

from .inputs import _fresh_inputs
from .runtime import SEED_RUN, flatten, projected_loss, seeded

ADAM_EPS = 1e-8
SGD_LR = 0.1  # a high SGD learning rate: updates it cannot make are lost at any usual lr
FD_H = 1e-6
FD_TOL = 1e-4


def update_hazard(grads: list, params: list) -> str | None:
    """Why the original's gradients cannot train the parameters, or None (no hazard shown)."""
    gs = [g.detach().to(torch.float64).flatten() for g in grads if torch.is_tensor(g) and g.numel()]
    if not gs:
        return None
    flat = torch.cat(gs)
    rms = float(flat.pow(2).mean().sqrt())
    if 0.0 < rms < ADAM_EPS:
        return (f"the original's gradients have rms {rms:.1e}, below Adam's eps ({ADAM_EPS:g}): its step, about "
                f"lr*g/(|g|+eps), is {rms / (rms + ADAM_EPS):.1%} of the intended size")
    unchanged = total = 0
    for g, p in zip(grads, params):
        if not (torch.is_tensor(g) and torch.is_tensor(p)) or g.shape != p.shape or not p.is_floating_point():
            continue
        p32 = p.detach().to(torch.float32)
        stepped = p32 - (SGD_LR * g.detach().to(torch.float64)).to(torch.float32)
        unchanged += int((stepped == p32).sum())
        total += p32.numel()
    if total and unchanged / total > 0.5:
        return (f"an SGD step at lr {SGD_LR:g} in float32 leaves {unchanged / total:.0%} of the original's weights "
                f"bitwise unchanged: its updates are below float32 resolution")
    return None


def fd_discrepancy(model: Any, leaves: list) -> float | None:
    """Relative disagreement between autograd and finite differences along one random direction
    (parameters and float inputs together, eval mode, fp64); None when it cannot be measured."""
    if not isinstance(model, nn.Module):
        return None
    try:
        base = copy.deepcopy(model).eval()
    except Exception:  # noqa: BLE001
        return None
    names = [n for n, p in base.named_parameters() if p.requires_grad and p.is_floating_point()]
    xs_idx = [i for i, x in enumerate(leaves) if torch.is_tensor(x) and x.is_floating_point()]
    g = torch.Generator().manual_seed(SEED_RUN + 11)
    dirs_p = {n: torch.randn(tuple(dict(base.named_parameters())[n].shape), generator=g, dtype=torch.float64)
              for n in names}
    dirs_x = {i: torch.randn(tuple(leaves[i].shape), generator=g, dtype=torch.float64) for i in xs_idx}

    def value(h: float, grad: bool = False):
        m = copy.deepcopy(base)  # each evaluation from the same state: the write may change it
        params = dict(m.named_parameters())
        with torch.no_grad():
            for n in names:
                params[n].add_(h * dirs_p[n].to(params[n].dtype))
        xs = [x.detach().clone() if torch.is_tensor(x) else x for x in leaves]
        for i in xs_idx:
            xs[i] = (xs[i] + h * dirs_x[i].to(xs[i].dtype)).requires_grad_(grad)
        with seeded(SEED_RUN):
            loss = projected_loss(flatten(m(*_fresh_inputs(xs))))
        if loss is None:
            return None, None
        if not grad:
            return float(loss), None
        targets = [params[n] for n in names] + [xs[i] for i in xs_idx]
        dirs = [dirs_p[n] for n in names] + [dirs_x[i] for i in xs_idx]
        if not loss.requires_grad or not targets:
            return float(loss), 0.0
        gs = torch.autograd.grad(loss, targets, allow_unused=True)
        dd = sum(float((gr.to(torch.float64) * d).sum()) for gr, d in zip(gs, dirs) if gr is not None)
        return float(loss), dd

    try:
        _, analytic = value(0.0, grad=True)
        plus, _ = value(FD_H)
        minus, _ = value(-FD_H)
    except Exception:  # noqa: BLE001 - user code
        return None
    if analytic is None or plus is None or minus is None:
        return None
    numeric = (plus - minus) / (2 * FD_H)
    scale = max(abs(numeric), abs(analytic), 1e-12)
    if not math.isfinite(numeric) or not math.isfinite(analytic):
        return None
    return abs(numeric - analytic) / scale
