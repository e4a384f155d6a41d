"""The probe's own tensor arithmetic: outside autograd and torch-function modes, batched where torch allows."""

from __future__ import annotations

import torch


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


def norms(tensors: list[torch.Tensor]) -> list[float]:
    if not tensors:
        return []
    t0 = tensors[0]
    if t0.layout == torch.strided and all(t.device == t0.device and t.dtype == t0.dtype and t.layout == t0.layout
                                          for t in tensors):
        return torch.stack(torch._foreach_norm(tensors)).tolist()
    by_dev: dict = {}
    for i, t in enumerate(tensors):
        by_dev.setdefault((t.device, t.dtype, t.layout), []).append(i)
    out = [0.0] * len(tensors)
    for idx in by_dev.values():
        group = [tensors[i] for i in idx]
        if group[0].layout != torch.strided:
            vals = [float(t.coalesce().values().norm()) if t.is_sparse else float(t.norm()) for t in group]
        else:
            vals = torch.stack(torch._foreach_norm(group)).float().tolist()
        for i, v in zip(idx, vals):
            out[i] = v
    return out
