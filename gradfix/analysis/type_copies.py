"""Whether `factory(..., requires_grad=True).type(T)` / `.type_as(y)` copies (GF302): the legacy tensor types
and dtypes a conversion names, resolved through the scope's bindings. A copy is a new, non-leaf tensor."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname
from gradfix.analysis.params import DTYPE_NAMES, FACTORIES, _string_value, code_of, is_true, kwarg

# `x.type(torch.cuda.FloatTensor)`: the legacy tensor types, by the dtype and device they stand for
_TENSOR_TYPES = {"Float": "torch.float32", "Double": "torch.float64", "Half": "torch.float16",
                 "BFloat16": "torch.bfloat16"}


def type_conversion_copies(call: cst.Call, index, flow=None) -> str | None:
    """Why `factory(..., requires_grad=True).type(T)` / `.type_as(y)` copies, or None when that is not shown. The
    factory has no `device=` (a CPU tensor) and its dtype is float32 or given as a literal dtype. `T` is a CUDA
    tensor type (`torch.cuda.FloatTensor`), a tensor type or dtype of another floating dtype, or a name every
    binding of which in the scope (or at module level) is one, or `A if torch.cuda.is_available() else B` with a
    CUDA arm (a copy wherever a GPU is present, as `.to(device)` is); `y` is a name every binding of which is a
    tensor factory given another `dtype=` or a CUDA `device=`."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("type", "type_as") and len(call.args) == 1 and
            call.args[0].keyword is None and not call.args[0].star and isinstance(func.value, cst.Call)):
        return None
    base = func.value
    if qualname(base.func, index.imports) not in FACTORIES or qualname(base.func, index.imports).endswith("_like"):
        return None
    rg = kwarg(base, "requires_grad")
    if rg is None or not is_true(rg.value) or kwarg(base, "device") is not None:
        return None
    dt = kwarg(base, "dtype")
    base_dtype = DTYPE_NAMES.get(qualname(dt.value, index.imports) or "") if dt is not None else "torch.float32"
    if base_dtype is None:
        return None
    arg = call.args[0].value
    values = _bound_values(arg, index, flow)
    if not values:
        return None
    if func.attr.value == "type":
        reasons = [_type_target_copies(v, index, base_dtype) for v in values]
    else:
        reasons = [_like_copies(v, index, base_dtype) for v in values]
    return reasons[0] if all(reasons) else None


def _bound_values(arg, index, flow) -> list:
    """`arg` itself, or for a name every value bound to it in the scope's flow (else the module's)."""
    if not isinstance(arg, cst.Name):
        return [arg]
    for f in ([flow] if flow is not None else []) + [index.flow(index.module)]:
        found = [b.value for b in f.bindings if b.name == arg.value and b.step >= 0]
        if found:
            return found if all(v is not None for v in found) else []
    return []


def _type_target_copies(value, index, base_dtype: str) -> str | None:
    if isinstance(value, cst.IfExp):
        test = code_of(value.test)
        if "cuda.is_available" not in test:
            return None
        arms = [_type_target_copies(v, index, base_dtype) for v in (value.body, value.orelse)]
        return next((a for a in arms if a and "CUDA" in a), None)
    q = qualname(value, index.imports) or ""
    if q in DTYPE_NAMES:
        return f"to {DTYPE_NAMES[q]}" if DTYPE_NAMES[q] != base_dtype else None
    parts = q.split(".")
    if len(parts) < 2 or parts[0] != "torch" or not parts[-1].endswith("Tensor"):
        return None
    dtype = _TENSOR_TYPES.get(parts[-1][:-len("Tensor")])
    if dtype is None:
        return None
    if parts[1] == "cuda" and len(parts) == 3:
        return "to a CUDA tensor type (a copy wherever a GPU is present)"
    if len(parts) == 2 and dtype != base_dtype:
        return f"to {dtype}"
    return None


def _like_copies(value, index, base_dtype: str) -> str | None:
    if not (isinstance(value, cst.Call) and qualname(value.func, index.imports) in FACTORIES):
        return None
    dt = kwarg(value, "dtype")
    dtype = DTYPE_NAMES.get(qualname(dt.value, index.imports) or "") if dt is not None else None
    if dtype is not None and dtype != base_dtype:
        return f"to {dtype}, the dtype of the tensor it is matched to"
    dev = kwarg(value, "device")
    if dev is not None and (_string_value(dev.value) or "").startswith("cuda"):
        return "to the CUDA device of the tensor it is matched to"
    return None


__all__ = ["type_conversion_copies"]
