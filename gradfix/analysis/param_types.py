"""What a function parameter of unknown type is shown to be by how its function reads it.

A module's `forward` input is taken for a tensor by default (analysis/flow.py); some rules need more than the
default before they report a write into it: a list of feature maps also answers `x[i]` and `len(x)`.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.tree import walk

# reads of a name that only a tensor answers (a list or tuple of tensors has none of them)
_TENSOR_ATTRS = frozenset({
    "shape", "size", "dim", "ndim", "dtype", "device", "view", "view_as", "reshape", "permute", "transpose", "t",
    "unsqueeze", "squeeze", "contiguous", "flatten", "expand", "expand_as", "repeat", "narrow", "chunk", "split",
    "float", "double", "half", "long", "to", "cuda", "cpu", "detach", "clone", "mean", "sum", "norm", "softmax",
    "masked_fill", "new_zeros", "new_ones", "new_empty", "numel", "is_cuda", "requires_grad", "grad", "data",
})


def untyped_input(root) -> bool:
    """A parameter taken for a tensor only because it is an input of a module's `forward` (no annotation)."""
    return bool(root.is_param) and isinstance(root.value, cst.Param) and root.value.annotation is None


def used_as_tensor(index, flow, root) -> bool:
    """Whether the function reads the parameter (or a plain alias of it) as a tensor: a tensor attribute or method
    (`feats.size(0)`, `x.view(...)`), or as the input of a torch.nn layer of the class (`self.conv(x)`)."""
    names = {b.name for b in flow.bindings if b is root or b.root() is root}
    cls = index.enclosing_class(flow.scope) if isinstance(flow.scope, cst.FunctionDef) else None
    layers = index.submodules.get(cls.name.value, {}) if cls is not None else {}
    for node in walk(flow.scope):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value in names and \
                node.attr.value in _TENSOR_ATTRS:
            return True
        if type(node) is cst.Call and len(node.args) == 1 and type(node.args[0].value) is cst.Name and \
                node.args[0].value.value in names and type(node.func) is cst.Attribute and \
                type(node.func.value) is cst.Name and node.func.value.value == "self":
            ctor = layers.get(node.func.attr.value) or ""
            if ctor.startswith("torch.nn.") and ctor.rsplit(".", 1)[-1] not in ("ModuleList", "ModuleDict"):
                return True
    return False
