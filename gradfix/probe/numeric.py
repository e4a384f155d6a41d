"""The probe's own tensor arithmetic: outside autograd and torch-function modes, batched where torch allows."""

from __future__ import annotations

import torch

F32_RESOLUTION = float(torch.finfo(torch.float32).eps)  # 1.19e-7: a relative change below it rounds away


class _Quiet:
    """The probe's own tensor arithmetic: no graph, no torch-function modes (the tracer, the user's)."""

    __slots__ = ("_grad", "_dtf")

    def __enter__(self):
        self._grad = torch._C.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        self._dtf = torch._C.DisableTorchFunction()
        self._dtf.__enter__()

    def __exit__(self, *exc):
        self._dtf.__exit__(*exc)
        torch._C._set_grad_enabled(self._grad)


def quiet() -> _Quiet:
    return _Quiet()


def norm_tensors(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """The 2-norm of each tensor as a 0-d tensor, not read into Python: one _foreach_norm per (device, dtype)
    group (a single call when all match, as usual), sparse tensors one by one."""
    if not tensors:
        return []
    kinds = {(t.device, t.dtype, t.layout) for t in tensors}
    if len(kinds) == 1 and tensors[0].layout == torch.strided:
        return list(torch._foreach_norm(tensors))
    by_kind: dict = {}
    for i, t in enumerate(tensors):
        by_kind.setdefault((t.device, t.dtype, t.layout), []).append(i)
    out: list = [None] * len(tensors)
    for idx in by_kind.values():
        group = [tensors[i] for i in idx]
        if group[0].layout != torch.strided:
            vals = [t.coalesce().values().norm() if t.is_sparse else t.norm() for t in group]
        else:
            vals = torch._foreach_norm(group)
        for i, v in zip(idx, vals):
            out[i] = v
    return out


def floats(scalars: list[torch.Tensor]) -> list[float]:
    """Read 0-d tensors into Python floats with one stack and one read (per device when they differ)."""
    if not scalars:
        return []
    if len({(s.device, s.dtype) for s in scalars}) == 1:
        return torch.stack(scalars).tolist()
    by_dev: dict = {}
    for i, s in enumerate(scalars):
        by_dev.setdefault(s.device, []).append(i)
    out = [0.0] * len(scalars)
    for idx in by_dev.values():
        for i, v in zip(idx, torch.stack([scalars[i].double() for i in idx]).tolist()):
            out[i] = v
    return out


def norms(tensors: list[torch.Tensor]) -> list[float]:
    """The 2-norm of each tensor as a Python float."""
    return floats(norm_tensors(tensors))
