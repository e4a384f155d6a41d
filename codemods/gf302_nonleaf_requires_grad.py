"""GF302 nonleaf-requires-grad: `torch.randn(..., requires_grad=True).cuda()` holds a non-leaf."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.flow import parallel_elements
from gradfix.analysis.leaves import requires_grad_set
from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.params import (
    FACTORIES, CopyChain, append_arg, code_of, copy_chain, insert_before, is_optimizer_call, is_true, kwarg, make_kwarg, method_text,
    outermost_chain, stored_name, swap, without_arg, all_calls, MOVE_METHODS, used_as_leaf,
)
from gradfix.analysis.tree import walk
from gradfix.analysis.type_copies import type_conversion_copies
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs


def leaf_rewrite(chain: CopyChain) -> tuple[cst.BaseExpression, str]:
    """The rewritten expression and its form: create on the device, or keep the copies and
    call `.requires_grad_()` on the result (values identical, now a leaf)."""
    base = chain.base
    all_device = all(m.device is not None for m in chain.moves)
    if all_device and chain.device_kw and kwarg(base, "device") is None:
        device = chain.moves[-1].device
        dev_arg = make_kwarg("device", device)  # type: ignore[arg-type]
        args = list(base.args)
        if chain.requires_grad_arg is not None:
            args = insert_before(args, chain.requires_grad_arg, dev_arg)
        else:
            args = append_arg(append_arg(args, dev_arg), make_kwarg("requires_grad", cst.Name("True")))
        return base.with_changes(args=args), "device"
    table: dict[int, cst.CSTNode] = {}
    if chain.requires_grad_arg is not None:
        table[id(base)] = base.with_changes(args=without_arg(base.args, chain.requires_grad_arg))
        inner = swap(chain.outer, table)
    else:
        rg = chain.requires_grad_call
        table[id(rg)] = base  # `factory(...).requires_grad_()` -> `factory(...)`
        inner = swap(chain.outer, table)
    new = cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("requires_grad_")))  # type: ignore[arg-type]
    return new, "requires_grad_"


class NonleafRequiresGrad(Rule):
    id = "GF302"
    name = "nonleaf-requires-grad"
    summary = "A tensor created with requires_grad=True and then copied (`.cuda()`, `.to(dev)`, `.double()`) is a non-leaf"
    docs = RuleDocs(
        what=(
            "Finds a tensor factory (`torch.randn`, `zeros`, `ones`, `empty`, `full`, `tensor`, `arange`, ...) "
            "called with `requires_grad=True`, or followed by `.requires_grad_()`, and then copied: `.cuda()`, "
            "`.to(device)`, `.to(\"cuda\")`, `.double()`, `.half()`, `.to(torch.float64)`: inline, as each element of a "
            "list comprehension (`ws = [torch.ones(2, requires_grad=True).to(dev) for _ in range(n)]`, when the list "
            "goes to an optimizer), or as a rebinding of the name that holds the leaf (`x = torch.rand(3, "
            "requires_grad=True)` then `x = x.to(device)`, when `x.grad` is read or `x` is given to an optimizer "
            "afterwards; also when the flag was switched on by `x.requires_grad = True` or `x.requires_grad_()` "
            "between the two, and inside a tuple assignment, `x, y = x.cuda(), y.cuda()`). The same for the legacy "
            "`Variable(torch.ones(3), requires_grad=True).cuda()` (around a factory of known device and dtype), and "
            "for a factory given `requires_grad=True` inside arithmetic whose result is kept as the leaf "
            "(`z = torch.randn(8, requires_grad=True) * 0.01`, then `z` given to an optimizer or `z.grad` read; "
            "not a result only used as a value, nor one returned to a caller). Also (detect only) `.type(T)` / "
            "`.type_as(y)` after such a factory (no `device=`), when the conversion is shown to copy: `T` a CUDA tensor "
            "type (`torch.cuda.FloatTensor`), a dtype or tensor type other than the factory's, a name bound only to "
            "such, or `A if torch.cuda.is_available() else B` with a CUDA arm (a copy wherever a GPU is present, like "
            "`.to(device)`); `y` a name bound only to a factory with another `dtype=` or a CUDA `device=`; and the "
            "result is used as a leaf (a manual update under no_grad, `w -= lr * w.grad`, is no rebinding there). Left "
            "alone: a `.type(...)` / `.type_as(...)` whose target is not shown (a parameter, an attribute). Moves that do not copy "
            "(`.to(\"cpu\")` and `.cpu()` of a CPU tensor, `.float()` of a float32 tensor) are left alone, and so "
            "are `requires_grad_()` after the move, `device=` on the factory, code under `torch.no_grad()`, and "
            "attributes of `nn.Module` classes (GF304 registers those as parameters)."
        ),
        why=(
            "`requires_grad=True` applies to the leaf the factory creates; the copy is a new tensor computed from "
            "it, so the name holds a non-leaf. After `backward()` its `.grad` stays None (PyTorch warns only when "
            "`.grad` is read), the leaf that does get the gradient is unreachable, and `torch.optim.SGD([w])` raises "
            "`ValueError: can't optimize a non-leaf Tensor` (the example in the `Tensor.is_leaf` docs). On a CPU "
            "machine `.to(device)` with a CPU device returns the tensor itself, so the bug shows only on a GPU."
        ),
        example="w = torch.randn(3, 5, requires_grad=True).cuda()\nb = torch.zeros(5, requires_grad=True).double()",
        fixed_example='w = torch.randn(3, 5, device="cuda", requires_grad=True)\nb = torch.zeros(5).double().requires_grad_()',
        fix=(
            "A pure device move becomes `device=` on the factory (`torch.randn(3, device=dev, requires_grad=True)`, "
            "created on the device). Anything else keeps the copies and makes the result the leaf: "
            "`torch.zeros(5).double().requires_grad_()`, which keeps the values bit for bit (creating in float64 "
            "directly would draw different random numbers); `Variable(...)` has no `device=`, so it always takes "
            "that form, and arithmetic moves the flag to the result: `(torch.randn(8) * 0.01).requires_grad_()`. No fix when the name is mutated in place later (a leaf "
            "that requires grad cannot be), and none for the rebinding form (`x = x.to(device)`): the leaf may still "
            "be held elsewhere (a list, an optimizer built before the move), and which tensor should train is the "
            "user's call; create it on the device (`device=`) or call `.requires_grad_()` after the copy."
        ),
        fix_safety=(
            "Unsafe by label: the tensor becomes a leaf, so `.grad` is filled from now on (the point) and in-place "
            "writes to it outside `no_grad` would raise. Values, dtype and `requires_grad` are unchanged; with "
            "`device=`, a random factory on CUDA draws from the CUDA generator instead of the CPU one. The verifier "
            "decides."
        ),
        verification=(
            "`leaf-tensor`: the old and new expressions are evaluated under the same seed in the loaded file's "
            "namespace (float32 default dtype; free names in device positions become the CPU device, in size "
            "positions a small integer). The original must be a non-leaf whose `.grad` stays None after a backward "
            "of a random projection; the rewrite a leaf that requires grad, with equal values, dtype and shape, whose "
            "`.grad` is the gradient that reached the original. A move that is a no-op on this machine (`.cuda()` "
            "under the cuda->cpu redirect, `.to(\"cpu\")`) is forced to copy with `.clone()`, and the detail says "
            "so. `fixes-hazard` (a grad that was None is now a tensor)."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a `.to()`/`.cuda()`/... call (MOVE_METHODS) of a tensor made with
        `requires_grad=True` or `.requires_grad_()` (`copy_chain` kind "factory", `_rebindings`)."""
        if not facts.requires_grad_true:    # `requires_grad=True`, `.requires_grad_()`, `x.requires_grad = True`
            return False
        return bool(facts.called_attrs & (MOVE_METHODS | {"type", "type_as"})) or \
            "requires_grad" in facts.keywords   # a scaled factory

    def check(self, ctx):
        index = ctx.index
        imports = index.imports
        for node in all_calls(index):
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in MOVE_METHODS:
                continue
            chain = copy_chain(node, imports)
            if chain is None or chain.kind != "factory" or not outermost_chain(node, index):
                continue
            cls = index.enclosing_class(node)
            if cls is not None and cls.name.value in index.module_classes:
                continue  # GF304 (unregistered tensor attribute) or a per-call temporary in forward
            if index.under_no_grad(node):
                continue  # the copy records nothing: a leaf that does not require grad (another bug)
            use = used_as_leaf(node, index)
            if use is None:
                continue  # an initial state, an accumulator, autograd.grad input: a non-leaf works there
            yield self._finding(ctx, chain, use)
        yield from self._rebindings(ctx)
        yield from self._scaled_factories(ctx)
        yield from self._type_conversions(ctx)

    def _type_conversions(self, ctx):
        """`w = torch.randn(3, requires_grad=True).type(dtype)` / `.type_as(data)` where the conversion is shown
        to copy (params.py `type_conversion_copies`) and `w` is used as a leaf. Detect only: on a machine where
        the conversion is a no-op (a CPU run of a CUDA-or-CPU type) the original is a leaf, so the verifier has
        nothing to compare."""
        index = ctx.index
        for node in all_calls(index):
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in ("type", "type_as"):
                continue
            scope = index.enclosing(node, (cst.FunctionDef,)) or index.module
            cls = index.enclosing_class(node)
            if cls is not None and cls.name.value in index.module_classes or index.under_no_grad(node):
                continue
            why = type_conversion_copies(node, index, index.flow(scope))
            if why is None:
                continue
            use = used_as_leaf(node, index, updates_in_place=True)
            if use is None or use == "it is returned to the caller":
                continue
            name = stored_name(node, index) or "the result"
            yield ctx.finding(node, (
                f"`{shorten(code_of(node))}` converts the tensor created with requires_grad=True {why}: the "
                f"conversion is a new, non-leaf tensor, so `{name}` keeps no .grad after backward() and an optimizer "
                f"given it raises \"can't optimize a non-leaf Tensor\" ({use}); convert first and set "
                f"requires_grad after it (`....{node.func.attr.value}(...).requires_grad_()`) (detect only)"))

    def _scaled_factories(self, ctx):
        """`z = torch.randn(8, requires_grad=True) * 0.01`, then `z` given to an optimizer or its `.grad`
        read: the name holds the product, a non-leaf. The fix moves the flag to the product."""
        index = ctx.index
        for node in walk(index.module):
            if type(node) is not cst.BinaryOperation:
                continue
            parent = index.parents.get(node)
            if isinstance(parent, cst.BinaryOperation) or index.under_no_grad(node):
                continue  # the outermost operation is the stored value; under no_grad nothing is recorded
            factory = _grad_factory_operand(node, index.imports)
            if factory is None:
                continue
            cls = index.enclosing_class(node)
            if cls is not None and cls.name.value in index.module_classes:
                continue
            use = used_as_leaf(node, index)
            name = stored_name(node, index)
            if use is None or name is None or use == "it is returned to the caller":
                continue  # returned: the caller may use it as a value, not a leaf
            old = code_of(node)
            rg = kwarg(factory, "requires_grad")
            plain = factory.with_changes(args=without_arg(factory.args, rg))
            product = swap(node, {id(factory): plain})
            new_expr = cst.Call(func=cst.Attribute(value=cst.parse_expression(f"({code_of(product)})"),
                                                   attr=cst.Name("requires_grad_")))
            new = code_of(new_expr)
            message = (f"`{name}` holds `{shorten(old)}`, computed from a tensor created with requires_grad=True: the "
                       f"result is a non-leaf, so its `.grad` stays None after backward() and an optimizer given it "
                       f"raises \"can't optimize a non-leaf Tensor\" ({use})")
            if _mutated_later(ctx, node, name):
                yield ctx.finding(node, message + f" (no fix: `{name}` is modified in place later, which a leaf "
                                                  f"that requires grad does not allow)")
                continue
            fix = ctx.fix(f"make the result the leaf: `{shorten(new)}`", [Edit(node, new_expr)], Safety.UNSAFE,
                          {"kind": "leaf-tensor", "old": old, "new": new, "form": "requires_grad_"})
            yield ctx.finding(node, message, fix)

    def _rebindings(self, ctx):
        """`x = torch.rand(..., requires_grad=True)` (or `x = torch.rand(...)` then `x.requires_grad = True`)
        then `x = x.to(device)`, also inside a tuple assignment: the name now holds the copy. Detect only: the
        leaf may be held elsewhere (a list, an optimizer built before the move), and which of the two should
        train is for the user to say."""
        index = ctx.index
        for scope in index.scopes():
            flow = index.flow(scope)
            for b in flow.bindings:
                if b.step < 0 or b.no_grad or not isinstance(b.value, (cst.Call, cst.Tuple, cst.List)) or \
                        b.step >= len(flow.steps) or not isinstance(flow.steps[b.step].node, cst.Assign):
                    continue
                value = _element_for(flow.steps[b.step].node, b.name, b.value)
                if not isinstance(value, cst.Call):
                    continue
                recv = _copied_name(value)
                if recv is None or recv.value != b.name:
                    continue
                leaf = flow.name_binding(recv)
                if leaf is None or leaf.step < 0 or not isinstance(leaf.value, cst.Call) or leaf.no_grad:
                    continue
                chain = copy_chain(value, index.imports, leaf=leaf.value)
                origin = f"created with requires_grad=True on line {ctx.span(leaf.value).line}"
                if chain is None:
                    flag = _flag_set(flow, b.name, leaf.step, b.step)
                    if flag is None:
                        continue
                    asked = leaf.value.with_changes(
                        args=append_arg(list(leaf.value.args), make_kwarg("requires_grad", cst.Name("True"))))
                    chain = copy_chain(value, index.imports, leaf=asked)
                    if chain is None or chain.kind != "factory":
                        continue
                    origin = f"made to require grad on line {index.position(flag).start.line}"
                elif chain.kind != "factory" or chain.base is not _factory_of(leaf.value):
                    continue
                use = _use_after(flow, b)
                if use is None:
                    continue
                moves = ", ".join(f"`{method_text(m.call)}`" for m in chain.copying)
                yield ctx.finding(value, (
                    f"`{b.name} = {shorten(code_of(value))}` rebinds `{b.name}`, {origin}, to a copy of it "
                    f"({moves}): `{b.name}` now holds a non-leaf, so its `.grad` stays None after backward() and an "
                    f"optimizer given it raises \"can't optimize a non-leaf Tensor\" ({use}); create the tensor on the "
                    f"device (`device=`) or call `.requires_grad_()` after the copy"))

    def _finding(self, ctx, chain: CopyChain, use: str):
        index = ctx.index
        old = code_of(chain.outer)
        moves = ", ".join(f"`{method_text(m.call)}`" for m in chain.copying)
        name = stored_name(chain.outer, index)
        comp = index.parents.get(chain.outer)
        listed = stored_name(comp, index) if isinstance(comp, (cst.ListComp, cst.GeneratorExp)) else None
        holder = f"`{name}` holds" if name else f"each element of `{listed}` is" if listed else "the expression is"
        message = (f"`{shorten(old)}` sets requires_grad on the leaf it creates and then copies it ({moves}): {holder} "
                   f"a non-leaf, so its `.grad` stays None after backward() and an optimizer given it raises "
                   f"\"can't optimize a non-leaf Tensor\" ({use})")
        if name is not None and _mutated_later(ctx, chain.outer, name):
            return ctx.finding(chain.outer, message + f" (no fix: `{name}` is modified in place later, which a leaf "
                                                      f"that requires grad does not allow)")
        new_expr, form = leaf_rewrite(chain)
        new = code_of(new_expr)
        fix = ctx.fix(f"make the copy the leaf: `{shorten(new)}`", [Edit(chain.outer, new_expr)], Safety.UNSAFE,
                      {"kind": "leaf-tensor", "old": old, "new": new, "form": form})
        return ctx.finding(chain.outer, message, fix)


def _grad_factory_operand(node: cst.BinaryOperation, imports) -> cst.Call | None:
    """The factory call given `requires_grad=True` that is a direct operand of `node` (or of its nested
    operations: `torch.randn(..., requires_grad=True) * 0.01 + 1`), when there is exactly one."""
    found = []
    stack = [node]
    while stack:
        cur = stack.pop()
        for side in (cur.left, cur.right):
            if isinstance(side, cst.BinaryOperation):
                stack.append(side)
            elif isinstance(side, cst.Call) and qualname(side.func, imports) in FACTORIES:
                rg = kwarg(side, "requires_grad")
                if rg is not None and is_true(rg.value):
                    found.append(side)
    return found[0] if len(found) == 1 else None


def _element_for(stmt: cst.Assign, name: str, value):
    """The element of `a, b = x.cuda(), y.cuda()` that `name` is bound to; `value` itself otherwise."""
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, (cst.Tuple, cst.List)) or \
            not isinstance(value, (cst.Tuple, cst.List)):
        return value
    pairs = parallel_elements(stmt.targets[0].target, value)
    return next((v for t, v in pairs or () if isinstance(t, cst.Name) and t.value == name), None)


def _flag_set(flow, name: str, start: int, end: int) -> cst.CSTNode | None:
    """The statement between steps `start` and `end` that turns requires_grad of `name` on
    (`name.requires_grad = True`, `name.requires_grad_()`), when none turns it off: the tensor bound at
    `start` is then a leaf that requires grad."""
    found = None
    for st in flow.steps[start + 1:end]:
        flag = requires_grad_set(st.node, name)
        if flag is False:
            return None
        if flag:
            found = st.node
    return found


def _copied_name(call: cst.Call) -> cst.Name | None:
    """`x` of `x.to(device)` / `x.cuda().double()`: the name at the bottom of a chain of moves."""
    cur = call
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute) and cur.func.attr.value in MOVE_METHODS:
        cur = cur.func.value
    return cur if isinstance(cur, cst.Name) and cur is not call else None


def _factory_of(value: cst.Call) -> cst.Call:
    """The factory call of `torch.rand(...)` or `torch.rand(...).requires_grad_()`."""
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "requires_grad_" and \
            isinstance(value.func.value, cst.Call):
        return value.func.value
    return value


def _use_after(flow, b) -> str | None:
    """How the value bound by `b` is used as a trainable leaf by the statements after it: its
    `.grad` read, or the name given to an optimizer."""
    parents = flow.index.parents
    imports = flow.index.imports
    for st in flow.steps[b.step + 1:]:
        if isinstance(st.node, cst.BaseCompoundStatement):
            continue  # a header: its body's statements are steps of their own
        for n in walk(st.node):
            if not (isinstance(n, cst.Name) and n.value == b.name and flow.name_binding(n) is b):
                continue
            parent = parents.get(n)
            if isinstance(parent, cst.Attribute) and parent.value is n and parent.attr.value == "grad":
                return f"`{b.name}.grad` is read on line {flow.index.position(parent).start.line}"
            cur = parent
            while cur is not None and cur is not st.node:
                if is_optimizer_call(cur, imports):
                    return "it is given to an optimizer"
                cur = parents.get(cur)
    return None


def _mutated_later(ctx, node, name: str) -> bool:
    index = ctx.index
    scope = index.enclosing(node, (cst.FunctionDef,)) or ctx.module
    flow = index.flow(scope)
    for b in flow.bindings:
        if b.name == name and b.value is node and b.mutations:
            return True
    return False


RULE = NonleafRequiresGrad
