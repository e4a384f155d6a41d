"""A constant multiplier or divisor on the whole loss, read from its autograd graph before backward runs."""

from __future__ import annotations

import torch


def constant_factor(node, limit: int = 32):
    """Walk the loss's autograd chain from the root while it has a single differentiable input, looking at the
    constant factors met (`loss / 1e9`, `loss * 1e-9`, a GradScaler's scale). Returns (smallest factor, its node)
    or (1.0, None) when no constant multiplier or divisor below 1 is on the chain."""
    worst, worst_f = None, 1.0
    for _ in range(limit):
        name = node.name()
        f = None
        if name in ("MulBackward1", "DivBackward1"):
            other = getattr(node, "_saved_other", None)
            if isinstance(other, (int, float)) and other != 0:
                f = float(other) if name == "MulBackward1" else 1.0 / float(other)
        elif name in ("MulBackward0", "DivBackward0"):
            nxt = node.next_functions
            if len(nxt) == 2 and (nxt[0][0] is None) != (nxt[1][0] is None):
                const_is_other = nxt[1][0] is None
                try:
                    t = node._saved_other if const_is_other else node._saved_self
                except RuntimeError:
                    t = None
                if isinstance(t, torch.Tensor) and t.numel() == 1:
                    v = float(t)
                    if v != 0:
                        f = v if (name == "MulBackward0" or not const_is_other) else 1.0 / v
                        if name == "DivBackward0" and not const_is_other:
                            f = None  # c / loss: not a scale
        if f is not None:
            if abs(f) < abs(worst_f):
                worst, worst_f = node, f
        live = [n for n, _ in node.next_functions if n is not None]
        if len(live) != 1:
            break
        node = live[0]
    return (worst_f, worst) if worst is not None else (1.0, None)
