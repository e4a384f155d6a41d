"""GF213 leaf-rebinding: a leaf tensor that requires grad is rebound to a value computed from it, then its `.grad` is read."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.params import FACTORIES, copy_chain, is_true, kwarg
from gradfix.analysis.tree import walk
from gradfix.rule import Rule, RuleDocs

# A rebinding to one of these gives a leaf again (or a tensor that is not meant to be one).
_LEAF_AGAIN = frozenset({"detach", "requires_grad_", "detach_"})
_NEW_LEAF = frozenset({"torch.tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.as_tensor"})


def _is_leaf_ctor(expr, imports) -> bool:
    """`torch.randn(3, requires_grad=True)` or `torch.zeros(3).requires_grad_()` (no copy after it)."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
        inner = func.value
        return isinstance(inner, cst.Call) and qualname(inner.func, imports) in FACTORIES and \
            (not expr.args or is_true(expr.args[0].value))
    if qualname(func, imports) in FACTORIES:
        arg = kwarg(expr, "requires_grad")
        return arg is not None and is_true(arg.value)
    return False


_NOT_CARRYING = frozenset({"grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "ndim", "detach"})


def _reads(expr, name: str, parents) -> bool:
    """`expr` uses `name` in a way that carries its gradient (not `name.detach()`, `name.data`,
    `name.grad`, `name.shape`): the result is then a non-leaf."""
    for n in walk(expr):
        if isinstance(n, cst.Name) and n.value == name:
            parent = parents.get(n)
            if isinstance(parent, cst.Attribute) and parent.value is n and parent.attr.value in _NOT_CARRYING:
                continue
            return True
    return False


def _makes_leaf_again(expr, imports) -> bool:
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and (func.attr.value in _LEAF_AGAIN or func.attr.value.endswith("_")):
            return True  # `.detach()`, `.requires_grad_()`, an in-place method returning the same leaf
        if qualname(func, imports) in _NEW_LEAF:
            return True
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return True
    return False


def _retains_grad(flow, name: str, new) -> bool:
    """`name.retain_grad()` after the rebinding `new`, before `name` is bound again: autograd then fills
    the non-leaf's `.grad` too, so the read sees a gradient."""
    later = [b.step for b in flow.bindings if b.name == name and b.step > new.step]
    end = min(later) if later else len(flow.steps)
    for st in flow.steps[new.step + 1:end]:
        node = st.node
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            func = node.value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "retain_grad" and \
                    isinstance(func.value, cst.Name) and func.value.value == name:
                return True
    return False


_GRAD_AGAIN = frozenset({"backward", "requires_grad_", "requires_grad", "retain_grad"})


def _last(expr) -> str:
    return expr.value if isinstance(expr, cst.Name) else expr.attr.value


def _none_grad_use(flow, name: str, new, index):
    """After a rebinding under no_grad, the first later statement that names `name.grad`, when it is
    a use that fails on None (`name.grad.zero_()`, `name.grad.data`, `name.grad * lr`: not a test, not
    an assignment to it) in the same branch as the rebinding, not rebound in between: the new tensor was
    made with grad off, so its `.grad` is None for sure. Anything else (a guard, a branch, a try) is silence."""
    steps = flow.steps
    at = steps[new.step]
    for st in steps[new.step + 1:]:
        if any(b.name == name and b.step == st.index for b in flow.bindings):
            return None
        node = st.node if not isinstance(st.node, cst.BaseCompoundStatement) else None
        if node is None:
            continue
        for n in walk(node):
            if isinstance(n, cst.Attribute) and (n.attr.value in _GRAD_AGAIN or n.attr.value == "grad" and
                                                 isinstance(n.value, (cst.Name, cst.Attribute)) and
                                                 _last(n.value) == "autograd"):
                return None  # a backward (or requires_grad again) in between may fill `.grad`
            if not (isinstance(n, cst.Attribute) and n.attr.value == "grad" and isinstance(n.value, cst.Name)
                    and n.value.value == name):
                continue
            if st.branch != at.branch or st.loops != at.loops or \
                    index.enclosing(st.node, (cst.Try,)) is not index.enclosing(at.node, (cst.Try,)):
                return None
            parent = index.parents.get(n)
            if isinstance(parent, cst.Attribute) and parent.value is n:
                call = index.parents.get(parent)
                return call if isinstance(call, cst.Call) and call.func is parent else parent  # `w.grad.zero_()`
            if isinstance(parent, cst.BinaryOperation):
                return parent  # `w.grad * lr`
            return None
    return None


def _short(code: str) -> str:
    return shorten(code, 60)


class LeafRebinding(Rule):
    id = "GF213"
    name = "leaf-rebinding"
    summary = "A leaf tensor that requires grad is rebound to a value computed from it, then `.grad` is read"
    docs = RuleDocs(
        what=(
            "Finds `a = torch.rand(3, requires_grad=True)` (any tensor factory with `requires_grad=True`, or "
            "`.requires_grad_()`) followed in the same scope by `a = <expression using a>` (`a = torch.clamp(a, 0, "
            "1)`, `a = a - lr * a.grad` outside no_grad), when `a.grad` is read afterwards, or, in a loop, anywhere "
            "in the loop that rebinds it. Under no_grad the rebinding (`w = w - lr * w.grad`) gives a tensor that does "
            "not require grad and whose `.grad` is None: it is reported when the next statement naming `w.grad` uses "
            "it in a way that fails on None (`w.grad.zero_()`, `w.grad.data`, `w.grad * lr`) in the same branch and "
            "loop, with no try around only one of them. Left alone: rebinding to a new leaf (`a.detach().requires_grad_()`, "
            "`a.detach()`, `a.detach() - lr * a.grad`, `torch.tensor(...)`, `nn.Parameter(...)`, `a.data`), in-place updates under no_grad "
            "(`a -= lr * a.grad`), rebinding under no_grad followed by a guard (`if w.grad is not None`), an assignment "
            "(`w.grad = None`), a `.grad` use in another branch or loop, or no `.grad` use at all, a rebinding followed by `a.retain_grad()` (autograd then fills the non-leaf's `.grad` too), "
            "and code that never reads `a.grad` (a rebinding used "
            "only in the forward computation backpropagates into the leaf as intended). Copies such as `.cuda()` "
            "are GF302's, also as a rebinding (`a = a.to(device)`)."
        ),
        why=(
            "Rebinding the name does not change the leaf: it makes `a` name a new, non-leaf tensor. autograd fills "
            "`.grad` only on leaves, so `a.grad` is None (PyTorch warns \"The .grad attribute of a Tensor that is "
            "not a leaf Tensor is being accessed\"; hazards.md leaf-rebinding, pytorch#6991). In a manual "
            "gradient-descent loop the second iteration then fails on `None` (`a - lr * None`), or the update "
            "silently stops."
        ),
        example=(
            "w = torch.randn(3, requires_grad=True)\nfor _ in range(100):\n    loss = ((x @ w - y) ** 2).mean()\n"
            "    loss.backward()\n    w = w - 0.1 * w.grad"
        ),
        fixed_example=(
            "w = torch.randn(3, requires_grad=True)\nfor _ in range(100):\n    loss = ((x @ w - y) ** 2).mean()\n"
            "    loss.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n    w.grad = None"
        ),
        fix=(
            "Detect only: keep the leaf under its own name (`a_clamped = torch.clamp(a, 0, 1)`), or update it in "
            "place under `torch.no_grad()`."
        ),
        fix_safety="No fix is offered.",
        verification="None (detect only).",
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): the leaf is made with `requires_grad=True` or `.requires_grad_()`
        (`_is_leaf_ctor`) and its `.grad` is read (`_grad_read`)."""
        return ("requires_grad" in facts.idents or "requires_grad_" in facts.attrs) and "grad" in facts.attrs \
            and facts.requires_grad_request

    def check(self, ctx):
        index = ctx.index
        imports = index.imports
        for flow in index.training_code_flows():
            steps = flow.steps
            by_name: dict[str, list] = {}
            for b in flow.bindings:
                if b.step >= 0:
                    by_name.setdefault(b.name, []).append(b)
            for name, bindings in by_name.items():
                for leaf, new in zip(bindings, bindings[1:]):
                    if not _is_leaf_ctor(leaf.value, imports) or leaf.no_grad:
                        continue
                    stmt = steps[new.step].node
                    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and
                            isinstance(stmt.targets[0].target, cst.Name)):
                        continue
                    value = stmt.value
                    if not _reads(value, name, index.parents) or _makes_leaf_again(value, imports):
                        continue
                    if isinstance(value, cst.Call) and copy_chain(value, imports, leaf=leaf.value) is not None:
                        continue  # `a = a.to(device)`: a copy of the leaf, GF302's
                    if new.no_grad:
                        crash = _none_grad_use(flow, name, new, index)
                        if crash is not None:
                            yield ctx.finding(stmt, (
                                f"`{name} = {_short(ctx.code(value))}` under torch.no_grad() rebinds `{name}`, the "
                                f"leaf tensor created with requires_grad=True, to a new tensor that does not require "
                                f"grad and has no .grad: `{_short(ctx.code(crash))}` (line {ctx.span(crash).line}) "
                                f"then fails on None; update the leaf in place (`{name} -= ...`) instead"))
                            break
                        continue
                    found = self._grad_read(flow, name, new)
                    if found is None or _retains_grad(flow, name, new):
                        continue
                    read, after = found
                    where = f"`{name}.grad` (line {ctx.span(read).line})"
                    reading = (f"{where} then reads" if after else
                               f"on the loop's next iteration {where} reads")
                    yield ctx.finding(stmt, (
                        f"`{name} = {_short(ctx.code(value))}` rebinds `{name}`, the leaf tensor created with "
                        f"requires_grad=True, to a non-leaf computed from it: {reading} the new tensor's .grad, which "
                        f"autograd never fills (None); keep the leaf under its own name, or update it in place under "
                        f"torch.no_grad()"))
                    break

    def _grad_read(self, flow, name: str, new):
        """The first `name.grad` read that sees the rebinding: after it, or anywhere in a loop around it."""
        steps = flow.steps
        loops = steps[new.step].loops
        for st in steps:
            after = st.index > new.step
            same_loop = bool(loops) and loops[-1] in st.loops
            if not (after or same_loop):
                continue
            node = st.node if not isinstance(st.node, cst.BaseCompoundStatement) else None
            if node is None:
                continue
            for n in walk(node):
                if isinstance(n, cst.Attribute) and n.attr.value == "grad" and isinstance(n.value, cst.Name) and \
                        n.value.value == name:
                    later = [b for b in flow.bindings if b.name == name and b.step > new.step and b.step < st.index]
                    if after and later:
                        continue  # rebound again in between: that binding decides
                    return n, after
        return None


RULE = LeafRebinding
