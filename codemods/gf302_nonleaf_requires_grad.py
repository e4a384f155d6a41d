"""GF302 nonleaf-requires-grad: `torch.randn(..., requires_grad=True).cuda()` holds a non-leaf."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import shorten
from gradfix.analysis.params import (
    CopyChain, append_arg, code_of, copy_chain, insert_before, kwarg, make_kwarg, method_text, outermost_chain,
    stored_name, swap, without_arg, all_calls, MOVE_METHODS, used_as_leaf,
)
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs


def leaf_rewrite(chain: CopyChain) -> tuple[cst.BaseExpression, str]:
    """The rewritten expression and its form: create on the device, or keep the copies and
    call `.requires_grad_()` on the result (values identical, now a leaf)."""
    base = chain.base
    all_device = all(m.device is not None for m in chain.moves)
    if all_device and kwarg(base, "device") is None:
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
            "`.to(device)`, `.to(\"cuda\")`, `.double()`, `.half()`, `.to(torch.float64)`. Moves that do not copy "
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
            "directly would draw different random numbers). No fix when the name is mutated in place later (a leaf "
            "that requires grad cannot be)."
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

    def _finding(self, ctx, chain: CopyChain, use: str):
        index = ctx.index
        old = code_of(chain.outer)
        moves = ", ".join(f"`{method_text(m.call)}`" for m in chain.copying)
        name = stored_name(chain.outer, index)
        holder = f"`{name}` holds" if name else "the expression is"
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


def _mutated_later(ctx, node, name: str) -> bool:
    index = ctx.index
    scope = index.enclosing(node, (cst.FunctionDef,)) or ctx.module
    flow = index.flow(scope)
    for b in flow.bindings:
        if b.name == name and b.value is node and b.mutations:
            return True
    return False


RULE = NonleafRequiresGrad
