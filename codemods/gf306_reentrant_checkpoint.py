"""GF306 reentrant-checkpoint: `torch.utils.checkpoint.checkpoint(...)` or `checkpoint_sequential(...)`
without `use_reentrant=False`."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import dotted, qualname, shorten, target_names
from gradfix.analysis.tree import children
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
            "`checkpoint`, `cp.checkpoint`) that do not pass `use_reentrant`, when none of the checkpointed "
            "block's inputs requires grad: a batch, a fresh tensor, or an argument every call site in the file "
            "passes such a value for (the first block of a model called on data). Only then does the reentrant "
            "default lose the gradients; with an activation as input (a block after a stem, the blocks of a "
            "layer stack inside a model) it trains as it should, and torch's warning that the flag should be "
            "explicit is not a hazard gradfix reports. Unknown provenance (a block's forward nobody in the file "
            "calls) is left alone. An explicit `use_reentrant=True` is a "
            "deliberate choice and is left alone (TorchFix TOR003 likewise only asks for the flag to be explicit), "
            "as is `checkpoint_sequential`'s flag given as its fourth positional argument; so is a call that passes "
            "`**kwargs` (the flag may be inside), a `checkpoint_sequential` call with `*args`, and other libraries' "
            "`checkpoint` functions. Which `checkpoint` a call sees is decided by import resolution at the call, by "
            "Python's scoping: a function of the file named `checkpoint` (saving training state), a parameter or "
            "local variable of that name, a relative import, `deepspeed.checkpointing.checkpoint`, or a name that "
            "the branches of an `if` / `try` bind to different functions (unknown: left alone) are not torch's, "
            "even where the file also imports torch's somewhere else; `import ... checkpoint as ckpt` is followed."
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
            "whose gradient was None in the original and is a tensor in the rewrite are listed: `fixes-hazard` "
            "when there are any (\"a grad that was None is now a tensor\"), else `equivalent`."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a call named `checkpoint` or `checkpoint_sequential`, or named as an
        import of one of those binds it (the `names` `check` starts from)."""
        names = {"checkpoint", "checkpoint_sequential"}
        return bool(facts.called & (names | {local for local, name in facts.imported_as if name in names}))

    def check(self, ctx):
        imports = ctx.index.imports
        # `checkpoint`, `cp.checkpoint`, and names imported as torch's (`import ... checkpoint as ckpt`)
        names = {"checkpoint", "checkpoint_sequential"} | {k for k, v in imports.aliases.items() if v in CHECKPOINT}
        for node in all_calls(ctx.index):
            name = last_name(node.func)
            if name not in names or qualname(node.func, imports) not in CHECKPOINT:
                continue
            if resolve_in_scope(ctx.index, node.func) not in CHECKPOINT:
                continue  # the name is torch's in some import, but not where it is called (unknown: silence)
            if any(a.keyword is not None and a.keyword.value == "use_reentrant" for a in node.args):
                continue
            if any(a.star == "**" for a in node.args):
                continue
            sequential = qualname(node.func, imports).endswith("checkpoint_sequential")
            if sequential:
                positional = [a for a in node.args if a.keyword is None]
                if any(a.star for a in positional) or len(positional) > _SEQUENTIAL_FLAG_POSITION:
                    continue  # the flag is (or may be) given by position
            if not _inputs_without_grad(ctx.index, node, 2 if sequential else 1):
                continue  # an input that requires grad (or may): the reentrant variant builds the graph
            new_call = node.with_changes(args=append_arg(list(node.args), make_kwarg("use_reentrant", cst.Name("False"))))
            what = "each checkpointed segment's" if sequential else "the checkpointed block's"
            message = (f"`{shorten(code_of(node))}` does not pass `use_reentrant` and no input of it requires "
                       f"grad: torch 2.13 uses the reentrant variant, which then builds no graph, so {what} "
                       f"parameters get None gradients (only a warning says so); pass `use_reentrant=False`")
            fix = ctx.fix("pass `use_reentrant=False`", [Edit(node, new_call)], Safety.UNSAFE, {"kind": "checkpoint-grads"})
            yield ctx.finding(node, message, fix)


_FLAGS = frozenset({"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"})


def _inputs_without_grad(index, call: cst.Call, skip: int) -> bool:
    """The hazard shows only when no input of the checkpointed block requires grad: then the
    reentrant variant returns an output outside the graph and the block's parameters get None
    gradients (measured, torch 2.13: `checkpoint(nn.Linear(3, 3), torch.randn(2, 3))` gives
    `requires_grad=False`). With an activation as input it trains as it should. So every input must
    be shown to be grad-free (a batch, `torch.randn(...)`, an argument every call site in the file
    passes such a value for), in code that runs with grad on; unknown provenance means silence."""
    scope = index.enclosing(call, (cst.FunctionDef,))
    if scope is not None and not index.grad_enabled(scope):
        return False
    flow = index.flow(scope if scope is not None else index.module)
    small = call
    while small is not None and not isinstance(small, cst.BaseSmallStatement):
        small = index.parents.get(small)
    st = flow.step_of.get(id(small)) if small is not None else None
    if st is None or st.no_grad:
        return False
    positional = [a for a in call.args if a.keyword is None]
    inputs = positional[skip:] + [a for a in call.args if a.keyword is not None and a.keyword.value not in _FLAGS]
    if not inputs or any(a.star for a in inputs):
        return False
    return all(flow.requires_grad(a.value) is False for a in inputs)


# --------------------------------------------------------------------------- scoped name resolution
# The file's ImportMap is one table for the whole file (the last import of a name wins, relative
# imports and local bindings are not in it). A `checkpoint` that some import binds to torch's may
# be, where it is called, a function of the file, a local variable, a parameter, another library's
# (`deepspeed.checkpointing.checkpoint` imported in the other branch of an `if`), or a relative
# import. This resolves the callee's root name by Python's scoping rules, and gives up (None)
# when the bindings the call may see disagree. A candidate for the shared analysis
# (`names.resolve_at(node)`).

_SCOPES = (cst.FunctionDef, cst.Lambda)


def resolve_in_scope(index, func: cst.BaseExpression) -> str | None:
    """The qualified name of `func` as seen at the call, or None when unknown."""
    name = dotted(func)
    if name is None:
        return None
    root, _, rest = name.partition(".")
    scope = index.enclosing(func, _SCOPES)
    while True:
        if scope is None:
            bindings = _bindings(index, index.module, root)
        else:
            bindings = _bindings(index, scope, root)
            if bindings == ["global"]:
                scope = None
                continue
        if bindings:
            quals = set(bindings)
            if len(quals) != 1 or None in quals or "global" in quals:
                return None
            qual = quals.pop()
            return f"{qual}.{rest}" if rest else qual
        if scope is None:
            return None  # unbound in the file (a builtin, or a NameError): not torch's
        scope = index.enclosing(scope, _SCOPES)


def _bindings(index, scope: cst.CSTNode, name: str) -> list:
    """What binds `name` directly in `scope` (not in nested functions or classes): the qualified
    name for an import of an absolute module (or an assignment of a dotted name resolving to one),
    None for anything else, "global" for a `global` / `nonlocal` declaration."""
    key = f"gf306.bindings.{id(scope)}.{name}"
    return index.memo(key, lambda: _collect(index, scope, name))


def _collect(index, scope: cst.CSTNode, name: str) -> list:
    found: list = []
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        params = scope.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.name.value == name:
                found.append(None)
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param) and p.name.value == name:
                found.append(None)
        stack = [scope.body]
    else:
        stack = list(scope.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef):
            if node.name.value == name:
                found.append(None)
            for dec in node.decorators:
                stack.append(dec)
            continue  # its body is another scope
        if kind in (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp):
            continue
        if kind is cst.Import:
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    if alias.asname.name.value == name:
                        found.append(full)
                elif full.split(".")[0] == name:
                    found.append(name)
            continue
        if kind is cst.ImportFrom:
            if isinstance(node.names, cst.ImportStar):
                found.append(None)  # may bind anything
                continue
            base = None if node.relative or node.module is None else dotted(node.module)
            for alias in node.names:
                local = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                if local == name:
                    found.append(f"{base}.{dotted(alias.name)}" if base else None)
            continue
        if kind in (cst.Global, cst.Nonlocal):
            if any(n.name.value == name for n in node.names):
                found.append("global")
            continue
        if kind in (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr):
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
            value = node.value if kind in (cst.Assign, cst.AnnAssign) else None
            for t in targets:
                for n in target_names(t):
                    if n == name:
                        q = qualname(value, index.imports) if value is not None and len(targets) == 1 \
                            and type(t) is cst.Name else None
                        found.append(q if q is not None and "." in q else None)
        elif kind in (cst.For, cst.CompFor):
            if name in target_names(node.target):
                found.append(None)
        elif kind is cst.WithItem and node.asname is not None:
            if name in target_names(node.asname.name):
                found.append(None)
        elif kind is cst.ExceptHandler and node.name is not None:
            if name in target_names(node.name.name):
                found.append(None)
        stack.extend(reversed(children(node)))
    return found


RULE = ReentrantCheckpoint
