"""What autograd saves for backward, as Flow's walk meets each call and operator (a mixin of flow.Flow).

`x * w` saves `w` only when `x` requires grad (and the reverse); `pow` saves its input; an op that feeds only a
comparison saves nothing that matters. These facts decide which later in-place writes GF101 may report; a
save that cannot be shown is not recorded (precision over recall).
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.bindings import TENSORISH, DetachEvent, Kind, Step
from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.provenance import NO, Grad


def _detach_call(expr) -> cst.Call | None:
    """The `t.detach()` inside `t.detach()`, `t.detach().cpu()`, `t.detach().numpy()`; None when cloned."""
    node = expr
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        meth = node.func.attr.value
        if meth == "detach":
            return node
        if meth in ("cpu", "numpy", "to", "view", "reshape", "float", "squeeze", "unsqueeze", "flatten"):
            node = node.func.value
            continue
        return None
    return None


class _Why:
    """A reason formatted only when a rule reports it (code generation is not free). It keeps
    the node, not the file's index: a reused flow must not hold an old version's trees."""

    __slots__ = ("node", "template")

    def __init__(self, node, template: str):
        self.node, self.template = node, template

    def __str__(self) -> str:
        return self.template.format(_short(self.node))


_EMPTY = cst.Module([])


def _short(node, limit: int = 60) -> str:
    # whitespace is collapsed, so the file's own indentation and newline do not matter
    return "?" if node is None else shorten(_EMPTY.code_for_node(node), limit)


class SaveEffects:
    """The saving side of Flow's walk (uses Flow's env, bindings and alias roots)."""

    def _save(self, expr, st: Step, why, cond: Grad) -> None:
        """Autograd saves `expr` at `st` when `cond` requires grad (the op's other inputs for a
        product, the op's own input for `norm` or `pow`, a module's weights for its input)."""
        if st.no_grad or cond == NO or self._feeds_only_a_test(getattr(why, "node", None)):
            return
        root = self.alias_root(expr)
        if root is not None and (root[0].kind in TENSORISH or root[0].is_param and root[0].kind is Kind.UNKNOWN):
            root[0].saved_at.append((st.index, why, cond))

    def _feeds_only_a_test(self, op) -> bool:
        """The op's result goes, through at most a few out-of-place methods, only into `.item()`, `.tolist()`,
        `float()` / `int()` / `bool()` or a comparison (`while x.norm().item() > 1:`): that node is never on a
        path to the loss, so backward never reads what it saved."""
        if not isinstance(op, (cst.Call, cst.BinaryOperation)):
            return False
        parents = self.index.parents
        cur = op
        for _ in range(6):
            parent = parents.get(cur)
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                return True
            if isinstance(parent, cst.Arg):
                call = parents.get(parent)
                return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and \
                    call.func.value in ("float", "int", "bool") and len(call.args) == 1 and parent.keyword is None
            if not (isinstance(parent, cst.Attribute) and parent.value is cur):
                return False
            call = parents.get(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return False
            meth = parent.attr.value
            if meth in ("item", "tolist"):
                return True
            if torchapi.is_inplace_method(meth) or meth in ("backward", "register_hook", "retain_grad"):
                return False
            cur = call
        return False

    def _call_effects(self, call: cst.Call, st: Step) -> None:
        self.calls.append((st, call))
        func = call.func
        if isinstance(func, cst.Attribute):
            meth = func.attr.value
            recv_kind = self.classify(func.value)[0]
            if recv_kind in TENSORISH or recv_kind is Kind.UNKNOWN:
                if torchapi.is_inplace_method(meth) and recv_kind is not Kind.UNKNOWN or (
                    meth in torchapi.INPLACE_METHODS and recv_kind is Kind.UNKNOWN
                ):
                    root = self.alias_root(func.value)
                    b = root[0] if root else None
                    if b is not None:
                        b.mutations.append((st.index, call))
                        self.target_binding[id(call)] = b
                    self.inplace.append((st, call, b, func.value))
                if recv_kind in TENSORISH or self._unknown_param(func.value):
                    if meth in torchapi.INPUT_SAVING_METHODS:
                        self._save(func.value, st, _Why(call, "`{}` saved it"), self.grad_of(func.value))
                    elif meth in torchapi.BINARY_SAVING_METHODS and call.args and \
                            self.classify(call.args[0].value)[0] in TENSORISH:
                        self._product_saves(func.value, call.args[0].value, meth in ("div", "divide"),
                                            st, _Why(call, "`{}` saved it"))
            if meth in ("append", "extend", "insert", "add", "update", "setdefault", "put") and call.args \
                    and not self._module_ref(func.value):  # `torch.add(wx, b)` returns a new tensor
                for arg in call.args:
                    root = self.alias_root(arg.value)
                    if root is not None:
                        root[0].escapes.append((st.index, _Why(func.value, "the container `{}`")))
                    if meth == "append":
                        self._note_detach(arg.value, st, None, "container")
        q = qualname(func, self.index.imports)
        if q in torchapi.INPUT_SAVING_FUNCS:
            # a function of several tensors (matmul, linear, cdist) saves each for the others' gradients
            cond = self.grad_of(call)
            for arg in call.args:
                if arg.keyword is None:
                    self._save(arg.value, st, _Why(call, "`{}` saved it"), cond)
        ctor = self._module_ctor_of_callee(func)
        if ctor in torchapi.INPUT_SAVING_MODULES and call.args:
            # a module with weights saves its input for their gradient; GELU / SiLU only when the input requires grad
            cond = self.grad_of(call)
            self._save(call.args[0].value, st,
                       _Why(call, "`{}` (" + ctor.rsplit('.', 1)[-1] + ") saved its input"), cond)
        # `t.detach().clamp_()` mutates t right away
        if isinstance(func, cst.Attribute) and torchapi.is_inplace_method(func.attr.value):
            inner = _detach_call(func.value)
            if inner is not None:
                src = self.alias_root(inner.func.value)  # type: ignore[union-attr]
                if src is not None:
                    self.detaches.append(DetachEvent(st.index, inner, src[0], None, "chained", func.value))

    def _binop_effects(self, node: cst.BinaryOperation, st: Step) -> None:
        op = node.operator
        lk = self.classify(node.left)[0]
        rk = self.classify(node.right)[0]
        why = _Why(node, "`{}` saved it")
        if isinstance(op, cst.Power) and lk in TENSORISH:
            self._save(node.left, st, why, self.grad_of(node.left))
        elif isinstance(op, cst.MatrixMultiply):
            self._product_saves(node.left, node.right, False, st, why)
        elif isinstance(op, cst.Multiply) and lk in TENSORISH and rk in TENSORISH:
            self._product_saves(node.left, node.right, False, st, why)
        elif isinstance(op, cst.Divide) and rk in TENSORISH:
            self._product_saves(node.left, node.right, True, st, why)

    def _product_saves(self, left, right, divide: bool, st: Step, why) -> None:
        """`a * b` saves `b` for `a`'s gradient and `a` for `b`'s: each only when the other side
        requires grad. `a / b` saves `a` for `b`'s gradient and `b` for either's."""
        lg, rg = self.grad_of(left), self.grad_of(right)
        self._save(left, st, why, rg)
        self._save(right, st, why, (lg | rg) if divide else lg)

    def _module_ctor_of_callee(self, func) -> str | None:
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            if self.class_name:
                return self.index.submodules.get(self.class_name, {}).get(func.attr.value)
        if isinstance(func, cst.Name):
            b = self.env.get(func.value)
            if b is not None and b.kind is Kind.MODULE:
                return b.ctor
        return None
