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
            "even where the file also imports torch's somewhere else; `import ... checkpoint as ckpt` is followed. "
            "Also (detect only) `checkpoint(block, h)` in a module class's method where the only binding of `h` "
            "reaching the call is `self.<emb>(ids)`, `<emb>` an `nn.Embedding` the file freezes with no condition "
            "around it (`self.<emb>.requires_grad_(False)` in `__init__`, or `for p in model.<emb>.parameters(): "
            "p.requires_grad = False` on the one instance the file builds) and nothing in the file sets "
            "requires_grad back on: the checkpointed blocks then see no input that requires grad. Left alone: a "
            "sum with a trainable value (`self.tok(ids) + self.pos`), a freeze under an `if`, and any unfreeze."
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
                frozen = None if sequential else _frozen_embedding_input(ctx.index, node)
                if frozen is not None:
                    yield ctx.finding(node, (
                        f"`{shorten(code_of(node))}` does not pass `use_reentrant`, and its input `{frozen[0]}` is the "
                        f"output of `{frozen[1]}`, an embedding whose parameters the file freezes (line {frozen[2]}): "
                        f"no input of it requires grad, so the reentrant variant torch 2.13 uses builds no graph and "
                        f"the checkpointed blocks' parameters get no gradient (backward() may raise \"element 0 of "
                        f"tensors does not require grad\"); pass `use_reentrant=False` (detect only)"))
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


_EMBEDDINGS = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag"})


def _unfreezes(index) -> bool:
    """Some statement sets requires_grad back on (`p.requires_grad = True`, `m.requires_grad_()`, a flag that is
    not the literal False): read from the tree, not the text (a docstring quoting a warning is no evidence)."""
    from gradfix.analysis.tree import walk

    for node in walk(index.module):
        if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Attribute) and
                                                t.target.attr.value == "requires_grad" for t in node.targets):
            if code_of(node.value) != "False":
                return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "requires_grad_" and not (node.args and code_of(node.args[0].value) == "False"):
            return True
    return False


def _frozen_embedding_input(index, call: cst.Call):
    """(input, module, line) when the one input of `checkpoint(fn, hidden)` in a module class's method is a name
    whose only binding reaching the call is `self.<sub>(ids)`, `<sub>` an `nn.Embedding` attribute (its input is
    indices: the output requires grad only through the weight) that the file freezes with no condition around
    it, in `__init__` (`self.<sub>.requires_grad_(False)`) or on the one instance of the class the file builds
    (`for p in model.<sub>.parameters(): p.requires_grad = False`), and nothing in the file sets requires_grad
    back on. The first pass then checkpoints a tensor that does not require grad, and so does every later one
    (each output is cut the same way)."""
    from gradfix.analysis.params import freeze_target
    from gradfix.analysis.reaching import reaching

    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 2 or len(call.args) != 2 or positional[1].star or \
            not isinstance(positional[1].value, cst.Name) or index.memo("gf306.unfreezes", lambda: _unfreezes(index)):
        return None
    scope = index.enclosing(call, (cst.FunctionDef,))
    cls = index.enclosing_class(call)
    if scope is None or cls is None or cls.name.value not in index.module_classes or not index.grad_enabled(scope):
        return None
    flow = index.flow(scope)
    small = call
    while small is not None and not isinstance(small, cst.BaseSmallStatement):
        small = index.parents.get(small)
    st = flow.step_of.get(id(small)) if small is not None else None
    if st is None or st.no_grad:
        return None
    name = positional[1].value.value
    reaches = reaching(flow, name, st.index)
    if len(reaches) != 1 or reaches[0].skipped:
        return None
    value = reaches[0].binding.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
            isinstance(value.func.value, cst.Name) and value.func.value.value == "self"):
        return None
    sub, cname = value.func.attr.value, cls.name.value
    if index.submodules.get(cname, {}).get(sub) not in _EMBEDDINGS:
        return None
    module_flow = index.flow(index.module)
    instances = {b.name for b in module_flow.bindings if b.ctor == cname}
    wanted = {f"self.{sub}"} | ({f"{instances.pop()}.{sub}"} if len(instances) == 1 else set())
    for fscope in index.scopes():
        for fst in index.flow(fscope).steps:
            target = freeze_target(fst.node)
            if target not in wanted or fst.branch or fst.no_grad:
                continue
            if target.startswith("self.") and not (isinstance(fscope, cst.FunctionDef) and
                                                   fscope.name.value == "__init__" and
                                                   index.enclosing_class(fscope) is cls):
                continue
            if fscope is not index.module and not target.startswith("self."):
                continue
            return name, code_of(value.func), index.position(fst.node).start.line
    return None


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
