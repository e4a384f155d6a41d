"""GF306 reentrant-checkpoint: `torch.utils.checkpoint.checkpoint(...)` or `checkpoint_sequential(...)`
without `use_reentrant=False`."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.params import all_calls, append_arg, code_of, last_name, make_kwarg
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

CHECKPOINT = frozenset({"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"})
# checkpoint_sequential(functions, segments, input, use_reentrant): a fourth positional argument is the flag
_SEQUENTIAL_FLAG_POSITION = 3


class ReentrantCheckpoint(Rule):
    id = "GF306"
    name = "reentrant-checkpoint"
    summary = ("`torch.utils.checkpoint.checkpoint(...)` or `checkpoint_sequential(...)` without `use_reentrant` "
               "runs the reentrant variant")
    docs = RuleDocs(
        what=(
            "Finds calls of `torch.utils.checkpoint.checkpoint(fn, *args)` and "
            "`torch.utils.checkpoint.checkpoint_sequential(functions, segments, input)` (however imported: "
            "`checkpoint`, `cp.checkpoint`) that do not pass `use_reentrant`. An explicit `use_reentrant=True` is a "
            "deliberate choice and is left alone (TorchFix TOR003 likewise only asks for the flag to be explicit), "
            "as is `checkpoint_sequential`'s flag given as its fourth positional argument; so is a call that passes "
            "`**kwargs` (the flag may be inside), a `checkpoint_sequential` call with `*args`, and other libraries' "
            "`checkpoint` functions."
        ),
        why=(
            "Without the flag torch 2.13 warns and uses the reentrant implementation (`checkpoint_sequential` "
            "passes it on to each segment's `checkpoint`). The reentrant variant only "
            "builds a graph when an input tensor requires grad: checkpointing the first block of a network (its "
            "input is data) gives the block's parameters `None` gradients, with nothing but that warning. It also "
            "ignores `torch.autograd.grad` inputs and keyword arguments. `use_reentrant=False` is the recommended "
            "variant and computes the same gradients wherever the reentrant one works."
        ),
        example="h = checkpoint(self.block1, x)\nreturn self.head(h)",
        fixed_example="h = checkpoint(self.block1, x, use_reentrant=False)\nreturn self.head(h)",
        fix="Adds `use_reentrant=False` as the last argument.",
        fix_safety=(
            "Unsafe by label: where the reentrant variant lost gradients they now appear (the point); elsewhere "
            "the gradients are the same. The verifier decides."
        ),
        verification=(
            "`checkpoint-grads`: the changed module is built (no-argument constructor or fixture) and run in float64, "
            "eval and train mode, once with inputs that require grad and once with inputs that do not (data). "
            "Outputs must agree, and every parameter gradient that the original computed must be equal; parameters "
            "whose gradient was None in the original and is a tensor in the rewrite are listed: `expected-change` "
            "when there are any (\"a grad that was None is now a tensor\"), else `equivalent`."
        ),
    )

    def check(self, ctx):
        imports = ctx.index.imports
        for node in all_calls(ctx.index):
            name = last_name(node.func)
            if name not in ("checkpoint", "checkpoint_sequential") or qualname(node.func, imports) not in CHECKPOINT:
                continue
            if any(a.keyword is not None and a.keyword.value == "use_reentrant" for a in node.args):
                continue
            if any(a.star == "**" for a in node.args):
                continue
            sequential = qualname(node.func, imports).endswith("checkpoint_sequential")
            if sequential:
                positional = [a for a in node.args if a.keyword is None]
                if any(a.star for a in positional) or len(positional) > _SEQUENTIAL_FLAG_POSITION:
                    continue  # the flag is (or may be) given by position
            new_call = node.with_changes(args=append_arg(list(node.args), make_kwarg("use_reentrant", cst.Name("False"))))
            what = "each checkpointed segment's" if sequential else "the checkpointed block's"
            message = (f"`{shorten(code_of(node))}` does not pass `use_reentrant`: torch 2.13 uses the reentrant "
                       f"variant, which builds no graph when no input requires grad, so {what} "
                       f"parameters get None gradients (only a warning says so); pass `use_reentrant=False`")
            fix = ctx.fix("pass `use_reentrant=False`", [Edit(node, new_call)], Safety.UNSAFE, {"kind": "checkpoint-grads"})
            yield ctx.finding(node, message, fix)


RULE = ReentrantCheckpoint
