"""GF102 detach-alias-mutated: a `detach()`ed copy that is really the same storage."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.flow import Kind
from gradfix.analysis.torchapi import MAYBE_ALIAS_METHODS
from gradfix.rewriting import apply_fixes
from gradfix.model import Edit, Fix, Safety
from gradfix.rule import Rule, RuleDocs


class DetachAliasMutated(Rule):
    id = "GF102"
    name = "detach-alias-mutated"
    summary = "A `detach()`ed alias is kept while it or its source is mutated in place"
    docs = RuleDocs(
        what=(
            "Finds `a = t.detach()` (also `.detach().cpu()` and `.detach().numpy()`, and the same stored in an "
            "attribute or a container) when `t` or `a` is mutated in place later in the same function, before "
            "either is rebound, and the shared storage shows: `t` is an activation (it requires grad and is not "
            "a parameter, a buffer or an attribute) and autograd saved it before the mutation, or the copy is "
            "read after it (or kept in a log container or attribute), or the copy is mutated and `t` read "
            "afterwards. Left alone: writes through a detached view of a parameter or buffer, which is how "
            "`zero_module` (`p.detach().zero_()`), EMA updates (`t.detach().mul_(d).add_(s)`) and master-weight "
            "copies work, and caller-provided output buffers filled through their views."
        ),
        why=(
            "`detach()` shares storage and the version counter with its source. A mutation of either changes "
            "both: the logged copy holds the mutated values (in the first seed, `f_log` ends up holding the "
            "normalised features, row norms 1.0), and if autograd saved the source, backward raises. On CPU "
            "`.detach().cpu()` and `.detach().numpy()` alias as well."
        ),
        example="f_log = f.detach()\nf /= f.norm(dim=1, keepdim=True)",
        fixed_example="f_log = f.detach().clone()\nf /= f.norm(dim=1, keepdim=True)",
        fix="Inserts `.clone()` right after `.detach()`: `t.detach().clone()`, `t.detach().clone().cpu()`.",
        fix_safety=(
            "Safe when the detached copy is not read after the mutation (it then only stops sharing storage). "
            "Unsafe when it is read after the mutation or escapes into an attribute or container: it now keeps "
            "the values from before the mutation, which is what a logging copy wants but changes a computation "
            "that used it. The verifier decides."
        ),
        verification=(
            "`equal`: module check; gradients, outputs and buffers agree (a logging copy carries no gradient). "
            "When the original crashes in backward because of the shared version counter, `fixes-crash`."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is a `x.detach()` call kept somewhere (flow.detaches,
        `_detach_call`), and a mutation of the same flow after it, where `flow.holds` the source's grad is True
        (`_hazard_shown`): a scope with both that may hold a value requiring grad (analysis/gradscopes.py)."""
        return "detach" in facts.called_attrs and facts.grad_detach_mutated

    def check(self, ctx):
        for flow in ctx.index.training_code_flows():
            for event in flow.detaches:
                finding = self._inspect(ctx, flow, event)
                if finding is not None:
                    yield finding

    def _inspect(self, ctx, flow, event):
        st = flow.steps[event.step]
        if st.no_grad:
            return None
        src = event.source
        group = [b for b in flow.bindings if b.shares_storage(src)]
        later = []
        for b in group:
            for i, node in b.mutations:
                if i > event.step or (event.kept_in == "chained" and i == event.step):
                    later.append((i, b, node))
        if event.kept_in == "chained":
            later.append((event.step, src, event.expr))
        if not later:
            return None
        later.sort(key=lambda t: t[0])
        i, who, node = later[0]
        holder = event.holder
        if not self._hazard_shown(flow, event, later):
            return None
        source_name = ctx.code(event.call.func.value)
        kept = {"name": f"`{holder.name}`" if holder else "a name", "attribute": "an attribute",
                "container": "a container", "chained": "the same expression"}[event.kept_in]
        mutated = f"`{who.name}`" if who is not None else "it"
        maybe = _maybe_alias_calls(event.expr, event.call)
        when = "" if not maybe else (f" when {' and '.join(f'`.{m}()`' for m in maybe)} returns the tensor itself "
                                     f"(it is already on that device or of that dtype)")
        message = (f"`{ctx.code(event.call)}` kept in {kept} shares storage with `{source_name}`{when}, and {mutated} "
                   f"is mutated in place at line {ctx.span(flow.steps[i].node).line}: both change")
        read_after = holder is not None and flow.reads_after(holder, i)
        unsafe = read_after or event.kept_in in ("attribute", "container", "chained")
        clone = cst.Call(func=cst.Attribute(value=event.call, attr=cst.Name("clone")))
        fix = ctx.fix(
            f"clone the detached copy: `{source_name}.detach().clone()`",
            [Edit(event.call, clone)],
            Safety.UNSAFE if unsafe else Safety.SAFE,
            self._contract(ctx, flow, src, later),
        )
        return ctx.finding(event.call, message, fix)


    @staticmethod
    def _hazard_shown(flow, event, later) -> bool:
        """The shared storage matters only for an activation (a value that requires grad, not a
        parameter, a buffer or an attribute: writing those through a detached view is how
        `zero_module`, EMA updates and master-weight copies work) and only when it shows: autograd
        saved the storage before the mutation (backward raises), or the detached copy is read
        after it or kept in a log container or attribute (it holds the mutated values), or the
        copy is mutated and the source read afterwards (the computation sees the change)."""
        src = event.source
        root = src.root()
        if "." in src.name or "." in root.name or Kind.PARAMETER in (src.kind, root.kind):
            return False
        if flow.holds(src.grad) is not True:
            return False
        if any(flow.saved_before(b, i) for i, b, _node in later):
            return True
        if event.kept_in == "chained":
            return False
        first = later[0][0]
        holder = event.holder
        if holder is not None and flow.reads_after(holder, first):
            return True
        on_copy = [i for i, b, _n in later if b is not src]
        if on_copy and flow.reads_after(src, on_copy[0]):
            return True  # the source (the loss's input) is read after its detached copy was changed
        return event.kept_in in ("attribute", "container") and any(b is not holder for _i, b, _n in later)

    @staticmethod
    def _contract(ctx, flow, src, mutations):
        """`equal`, or, when the detached copy itself is mutated, `reference`: the rewrite must
        equal the original without those in-place ops (the computation the author meant)."""
        on_alias = [(i, node) for i, b, node in mutations if b is not src and b is not None]
        if not on_alias:
            return {"kind": "equal"}
        edits = []
        for i, node in on_alias:
            st = flow.steps[i]
            small = st.node
            whole = small is node or (isinstance(small, cst.Expr) and small.value is node)
            if not whole:
                return {"kind": "equal"}
            line = st.line
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                edits.append(Edit(line, cst.RemovalSentinel.REMOVE))
            else:
                edits.append(Edit(small, cst.RemovalSentinel.REMOVE))
        reference = apply_fixes(ctx.module, [Fix("reference", tuple(edits), Safety.SAFE)])
        return {"kind": "reference", "reference": reference,
                "why": "the in-place op on the detached copy"}


def _maybe_alias_calls(expr, detach_call) -> list[str]:
    """The methods between `detach()` and the stored value that alias only on some devices or
    dtypes (`t.detach().cpu()`: the same storage on a CPU run, a copy on a GPU run)."""
    found = []
    while isinstance(expr, cst.Call) and expr is not detach_call and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in MAYBE_ALIAS_METHODS and expr.func.attr.value != "numpy":
            found.append(expr.func.attr.value)
        expr = expr.func.value
    return list(reversed(found))


RULE = DetachAliasMutated
