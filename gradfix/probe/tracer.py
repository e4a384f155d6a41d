"""A torch function mode, armed for one step only, that ties autograd nodes and gradient cuts to source lines.

Always-on tracing would cost far more than the 2x budget, so the probe arms it only when a previous step showed
something to localise: a tiny constant on the loss (which line made it), parameters with no gradient (where their
module's output leaves the graph), or a failed backward being replayed (which line changed a saved tensor in place).
The mode calls every op unchanged; it only looks at arguments and results.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from gradfix.probe.frames import user_location

# stop-gradients that keep the value: the usual way a path is cut by accident
_VALUE_CUTS = {"detach", "detach_", "item", "tolist", "numpy", "cpu_numpy", "__get__:data", "tensor", "as_tensor",
               "from_numpy", "__int__", "__float__", "new_tensor"}
_QUERIES = {"size", "dim", "numel", "__len__", "stride", "is_contiguous", "__repr__", "__format__", "__str__",
            "__hash__", "data_ptr", "element_size", "__bool__", "nelement", "is_floating_point", "is_complex",
            "__iter__", "storage_offset", "untyped_storage", "requires_grad_", "retain_grad", "register_hook",
            "__reduce_ex__", "__deepcopy__", "__array__", "equal", "allclose", "isfinite", "isnan", "isinf",
            "backward", "register_post_accumulate_grad_hook"}
_COMPARISONS = {"eq", "ne", "lt", "gt", "le", "ge", "__eq__", "__ne__", "__lt__", "__gt__", "__le__", "__ge__",
                "argmax", "argmin", "argsort", "topk", "sort", "max", "min", "isclose", "any", "all", "sign"}


def op_name(func) -> str:
    name = getattr(func, "__name__", None) or str(func)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        name = "__get__:" + getattr(owner, "__name__", "?")
    return name


def is_inplace(name: str, kwargs: dict) -> bool:
    if kwargs.get("inplace") is True or kwargs.get("out") is not None:
        return True
    if name.startswith("__i") and name.endswith("__") and name not in ("__iter__", "__index__", "__int__"):
        return True  # __itruediv__, __iadd__, ...
    return name in ("__setitem__",) or (name.endswith("_") and not name.endswith("__") and name not in _QUERIES)


def _storage(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - sparse, meta, functional tensors
        return None


class OpTracer(TorchFunctionMode):
    """Records, for the ops run while it is active: the line that produced each autograd node (`lines`), where
    tensors derived from `taint` leave the graph (`cuts`), and with `log=True` every op with its storages (`ops`)."""

    def __init__(self, *, lines: bool = False, taint: bool = False, log: bool = False):
        super().__init__()
        self.want_lines, self.want_taint, self.want_log = lines, taint, log
        self.lines: dict[int, tuple[str, int]] = {}
        self._keep: list = []  # keeps traced nodes and tensors alive so that their ids stay unique
        self.tainted: set[int] = set()
        self.cut_from: dict[int, tuple[str, tuple[str, int]]] = {}  # id(tensor) -> (op, location) of its cut
        self.cuts: list[tuple[str, tuple[str, int], bool]] = []  # (op, location, confirmed)
        self.ops: list[dict] = []

    def taint_outputs(self, out) -> None:
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.requires_grad:
                self.tainted.add(id(t))
                self._keep.append(t)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if name in _QUERIES or (name.startswith("__get__:") and name != "__get__:data"):
            return func(*args, **kwargs)
        inputs = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        entry = None
        if self.want_log:
            inplace = is_inplace(name, kwargs)
            entry = {"op": name, "loc": user_location(2), "inplace": inplace,
                     "target": _storage(args[0]) if inplace and args and isinstance(args[0], torch.Tensor) else None,
                     "storages": {s for s in map(_storage, inputs) if s is not None}}
            self.ops.append(entry)
        out = func(*args, **kwargs)
        results = [r for r in tree_flatten(out)[0] if isinstance(r, torch.Tensor)]
        if entry is not None:
            entry["storages"] |= {s for s in map(_storage, results) if s is not None}
        if self.want_lines:
            for r in results:
                gf = r.grad_fn
                if gf is not None and id(gf) not in self.lines:
                    loc = user_location(2)
                    if loc is not None:
                        self.lines[id(gf)] = loc
                        self._keep.append(gf)
        if self.want_taint and inputs:
            self._follow_taint(name, inputs, results)
        return out

    def _follow_taint(self, name, inputs, results) -> None:
        tainted = any(id(t) in self.tainted for t in inputs)
        cut_srcs = [self.cut_from[id(t)] for t in inputs if id(t) in self.cut_from]
        if tainted:
            if any(r.requires_grad for r in results):
                for r in results:
                    if r.requires_grad:
                        self.tainted.add(id(r))
                        self._keep.append(r)
            elif name not in _COMPARISONS:
                loc = user_location(3)
                if loc is not None:
                    site = (name, loc)
                    self.cuts.append((name, loc, False))
                    for r in results:
                        self.cut_from[id(r)] = site
                        self._keep.append(r)
        elif cut_srcs:
            if any(r.requires_grad for r in results):
                # a cut value re-enters the graph: that cut is on the path to the loss
                for op, loc in cut_srcs:
                    self.cuts.append((op, loc, True))
            else:
                for r in results:
                    self.cut_from[id(r)] = cut_srcs[0]
                    self._keep.append(r)

    def best_cut(self) -> tuple[str, tuple[str, int]] | None:
        """The cut most likely to be the one on the loss path: confirmed first, then value-keeping stop-gradients."""
        for want in (lambda c: c[2], lambda c: c[0] in _VALUE_CUTS, lambda c: True):
            for op, loc, confirmed in self.cuts:
                if want((op, loc, confirmed)):
                    return op, loc
        return None
