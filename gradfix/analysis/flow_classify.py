"""What an expression is, for the flow pass: its kind, its constructor, and the storage it aliases.

`classify` decides whether a value is a tensor, a module, an optimizer, ... and whether it shares storage with
a name already bound (a view, a detach, a plain assignment); `alias_root` finds that name.  It is a mixin of
`Flow` because it reads the bindings visible at the current step.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.bindings import TENSORISH, Binding, Kind
from gradfix.analysis.fileindex import inplace_flag
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.tree import children


class Classify:
    """Classification of expressions against the flow's bindings (`self.env`, `self.bindings`, `self.index`)."""

    def _module_ref(self, expr) -> bool:
        """`torch`, `np`, `torch.linalg`: an imported module this scope does not rebind."""
        if not self.index.imports.is_module(expr):
            return False
        root = (dotted(expr) or "").split(".")[0]
        return not any(b.name == root for b in self.bindings) and root not in _top_level_names(self.index)

    def alias_root(self, expr) -> tuple[Binding, str] | None:
        """The binding whose storage `expr` shares, and how, or None."""
        how = ""
        while True:
            if isinstance(expr, cst.Name):
                b = self.env.get(expr.value)
                return (b, how or "assignment") if b is not None else None
            if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
                meth = expr.func.attr.value
                if meth in ("to", "type", "float", "double", "half") and _copies(expr):
                    return None
                if meth in torchapi.VIEW_METHODS or meth in torchapi.MAYBE_ALIAS_METHODS \
                        or torchapi.is_inplace_method(meth) or meth in ("chunk", "split", "unbind"):
                    if meth in torchapi.MAYBE_ALIAS_METHODS and meth not in torchapi.VIEW_METHODS:
                        # `.cpu()`, `.to(dev)`, `.float()` return the tensor itself only when it is
                        # already on that device / of that dtype: an alias the code cannot show
                        how = "maybe"
                    how = how or ("detach" if meth == "detach" else "chunk" if meth in ("chunk", "split", "unbind")
                                  else "same" if torchapi.is_inplace_method(meth) else "view")
                    expr = expr.func.value
                    continue
                return None
            if isinstance(expr, cst.Attribute) and dotted(expr) in self.env:
                b = self.env[dotted(expr)]
                return b, how or "assignment"
            if isinstance(expr, cst.Attribute) and expr.attr.value in torchapi.VIEW_ATTRIBUTES:
                how = how or "view"
                expr = expr.value
                continue
            if isinstance(expr, cst.Subscript):
                if not self._basic_index(expr):
                    return None  # `t[idx_tensor]`, `t[mask]`: advanced indexing returns a copy
                how = how or "view"
                expr = expr.value
                continue
            return None

    def _basic_index(self, sub: cst.Subscript) -> bool:
        """Only ints (literals, names bound to numbers, arithmetic of them), slices, None and `...` (shown):
        basic indexing returns a view."""
        for el in sub.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                continue
            v = s.value
            if isinstance(v, cst.UnaryOperation):
                v = v.expression
            if isinstance(v, (cst.Integer, cst.Ellipsis)) or (isinstance(v, cst.Name) and v.value == "None"):
                continue
            if isinstance(v, cst.Name):
                b = self.env.get(v.value)
                if b is not None and b.kind is Kind.NUMBER:
                    continue
            if isinstance(v, cst.BinaryOperation) and self.classify(v)[0] is Kind.NUMBER:
                continue  # `f[i - 1]` with `i` a number: arithmetic of numbers is a number
            return False
        return True

    def classify(self, expr) -> tuple[Kind, str | None, bool, Binding | None, str]:
        """(kind, constructor, saves its output, storage root, how aliased)."""
        alias = self.alias_root(expr)
        root, how = (alias if alias else (None, ""))
        if isinstance(expr, cst.Name):
            b = self.env.get(expr.value)
            if b is None:
                return Kind.UNKNOWN, None, False, None, ""
            return b.kind, b.ctor, False, b, "assignment"
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return Kind.NUMBER, None, False, None, ""
        if isinstance(expr, cst.UnaryOperation):
            k = self.classify(expr.expression)[0]
            return k, None, False, None, ""
        if isinstance(expr, cst.BinaryOperation):
            lk = self.classify(expr.left)[0]
            rk = self.classify(expr.right)[0]
            if lk in TENSORISH or rk in TENSORISH:
                return Kind.TENSOR, None, False, None, ""
            if Kind.NUMPY in (lk, rk):
                return Kind.NUMPY, None, False, None, ""
            if lk is Kind.NUMBER and rk is Kind.NUMBER:
                return Kind.NUMBER, None, False, None, ""
            return Kind.UNKNOWN, None, False, None, ""
        if isinstance(expr, cst.Subscript):
            k = self.classify(expr.value)[0]
            if k in TENSORISH:
                return Kind.TENSOR, None, False, root, how
            return (Kind.NUMPY if k is Kind.NUMPY else Kind.UNKNOWN), None, False, None, ""
        if isinstance(expr, cst.Attribute):
            q = qualname(expr, self.index.imports)
            k = self.classify(expr.value)[0]
            if k in TENSORISH and expr.attr.value in torchapi.VIEW_ATTRIBUTES:
                return Kind.TENSOR, None, False, root, how
            if k in TENSORISH and expr.attr.value == "grad":
                return Kind.TENSOR, None, False, None, ""
            if q and q.startswith("numpy."):
                return Kind.OTHER, None, False, None, ""
            return Kind.UNKNOWN, None, False, None, ""
        if isinstance(expr, cst.Call):
            return self._classify_call(expr, root, how)
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
                             cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
                             cst.SetComp, cst.GeneratorExp)):
            return Kind.OTHER, None, False, None, ""
        if isinstance(expr, cst.IfExp):
            a = self.classify(expr.body)[0]
            b = self.classify(expr.orelse)[0]
            return (a if a is b else Kind.UNKNOWN), None, False, None, ""
        return Kind.UNKNOWN, None, False, None, ""

    def _classify_call(self, call: cst.Call, root, how):
        func = call.func
        q = qualname(func, self.index.imports)
        resolved = q is not None and (q.split(".")[0] in ("torch", "numpy", "torchvision") or self.index.is_module_ctor(q)
                                      or self.index.module_factory(q) is not None)
        if isinstance(func, cst.Attribute) and not resolved:
            recv = func.value
            meth = func.attr.value
            if isinstance(recv, cst.Name) and recv.value == "self":
                if self.class_name and self.class_name in self.index.module_classes:
                    saved = meth in self.index.output_saving_submodules.get(self.class_name, ())
                    return Kind.TENSOR, None, saved, None, ""
                return Kind.UNKNOWN, None, False, None, ""
            if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name) and recv.func.value == "super":
                if self.class_name and self.class_name in self.index.module_classes and meth == "forward":
                    return Kind.TENSOR, None, False, None, ""
                return Kind.UNKNOWN, None, False, None, ""
            rk, rctor = self.classify(recv)[:2]
            if meth in ("eval", "train") and rk is not Kind.MODULE:
                return Kind.MODULE, None, False, None, ""  # only modules have eval() / train()
            if rk in TENSORISH:
                if meth in torchapi.NON_TENSOR_METHODS:
                    return Kind.OTHER, None, False, None, ""
                if meth in ("numpy",):
                    return Kind.NUMPY, None, False, root, how
                return Kind.TENSOR, None, meth in torchapi.OUTPUT_SAVING_METHODS, root, how
            if rk is Kind.NUMPY:
                return Kind.NUMPY, None, False, None, ""
            if rk is Kind.OTHER and (rctor or "").startswith("torch.distributions.") and meth in _DISTRIBUTION_TENSORS:
                return Kind.TENSOR, None, False, None, ""  # `Normal(mu, sigma).sample()` is a tensor
            if rk is Kind.MODULE:
                if meth in ("to", "cuda", "cpu", "train", "eval", "double", "float", "half", "bfloat16", "type",
                            "xpu", "to_empty", "share_memory", "requires_grad_"):
                    return Kind.MODULE, rctor, False, None, ""
                if meth in ("parameters", "named_parameters", "modules", "children", "state_dict", "buffers",
                            "named_modules", "zero_grad", "apply", "register_forward_hook", "load_state_dict"):
                    return Kind.OTHER, None, False, None, ""
                return Kind.TENSOR, None, False, None, ""
            if rk is Kind.UNKNOWN and meth in {"detach"} | torchapi.OUTPUT_SAVING_METHODS:
                # only tensors have .detach()/.sigmoid(); the receiver is one
                return Kind.TENSOR, None, meth in torchapi.OUTPUT_SAVING_METHODS, root, how
            return Kind.UNKNOWN, None, False, None, ""
        if q is None:
            return Kind.UNKNOWN, None, False, None, ""
        if self.index.is_module_ctor(q):
            return Kind.MODULE, q, False, None, ""
        if self.index.module_factory(q) is not None:
            return Kind.MODULE, None, False, None, ""  # a project function that returns a module on every path
        if q.startswith("numpy."):
            return Kind.NUMPY, None, False, None, ""
        if q in torchapi.MODULE_RETURNING or q in torchapi.MODULE_IF_GIVEN_ONE:
            # `weight_norm(nn.Linear(4, 4))` is the Linear, not a tensor
            first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
            kind, ctor = self.classify(first)[:2] if first is not None else (Kind.UNKNOWN, None)
            if kind is Kind.MODULE:
                return Kind.MODULE, ctor, False, None, ""
            return (Kind.MODULE if q in torchapi.MODULE_RETURNING else Kind.UNKNOWN), None, False, None, ""
        if q.startswith(torchapi.SCHEDULER_PREFIXES) or q.startswith("transformers.get_"):
            return Kind.SCHEDULER, q, False, None, ""
        if q.startswith(torchapi.OPTIMIZER_PREFIXES):
            return Kind.OPTIMIZER, q, False, None, ""
        if q in ("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler"):
            return Kind.SCALER, q, False, None, ""
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return Kind.PARAMETER, None, False, None, ""
        last = q.rsplit(".", 1)[-1]
        if last[:1].isupper() and not last.endswith("Tensor") and q.startswith("torch.") and last != "Variable":
            return Kind.OTHER, q, False, None, ""  # a class (an observer, a distribution, a Generator)
        if q.startswith("torch.") and not q.startswith(("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.utils.",
                                                        "torch.hub.", "torch.jit.", "torch.onnx.", "torch.quantization.",
                                                        "torch.ao.")) \
                and q not in ("torch.device", "torch.Size", "torch.finfo", "torch.iinfo", "torch.manual_seed",
                              "torch.is_tensor", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
                              "torch.set_grad_enabled", "torch.autocast", "torch.load", "torch.save", "torch.numel",
                              "torch.get_default_dtype", "torch.dtype", "torch.compile"):
            saved = q in torchapi.OUTPUT_SAVING_FUNCS or (
                q in torchapi.INPLACE_OUTPUT_SAVING_FUNCS and inplace_flag(call, torchapi.INPLACE_OUTPUT_SAVING_FUNCS[q]))
            return Kind.TENSOR, None, saved, None, ""
        if isinstance(func, cst.Name):
            b = self.env.get(func.value)
            if b is not None and b.kind is Kind.MODULE:
                saved = b.ctor in torchapi.OUTPUT_SAVING_MODULES or self.index.module_saves_output(b.value)
                return Kind.TENSOR, None, saved, None, ""
        return Kind.UNKNOWN, None, False, None, ""

    def _derived_no_grad(self, value) -> bool:
        """A value computed only from tensors that were produced under no_grad."""
        names = []
        stack = [value]
        while stack:
            node = stack.pop()
            kind = type(node)   # `is`, not isinstance: these classes have no subclasses (tests/test_tree.py)
            if kind is cst.Call:
                f = node.func
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
                    return False
                if isinstance(f, cst.Name):
                    b = self.env.get(f.value)
                    if b is not None and b.kind is Kind.MODULE:
                        return False
            if kind is cst.Name:
                b = self.env.get(node.value)
                if b is not None and b.kind in TENSORISH:
                    names.append(b)
                continue
            if kind is cst.Attribute:
                stack.append(node.value)
                continue
            stack.extend(children(node))
        return bool(names) and all(b.no_grad for b in names)



# methods of a torch.distributions object that return tensors
_DISTRIBUTION_TENSORS = frozenset({"sample", "rsample", "sample_n", "log_prob", "entropy", "cdf", "icdf",
                                   "perplexity"})


def _top_level_names(index) -> set[str]:
    """Names the module body assigns (`queue = []` after `import queue` rebinds the module's name)."""
    def compute() -> set[str]:
        out: set[str] = set()
        for stmt in index.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            out.update(n.value for n in _names_in_target(t.target))
                    elif isinstance(small, cst.AnnAssign):
                        out.update(n.value for n in _names_in_target(small.target))
        return out
    return index.memo("flow.top_level_names", compute)


def _names_in_target(target) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names_in_target(el.value)]
    return []



def _copies(call: cst.Call) -> bool:
    """`.to(..., copy=True)`, or a conversion to another dtype (`.float()` of a half tensor is not
    shown to be one, so only an explicit copy counts)."""
    return any(a.keyword is not None and a.keyword.value == "copy" and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in call.args)
