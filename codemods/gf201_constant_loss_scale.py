"""GF201 constant-loss-scale: the whole loss divided by a huge literal before backward."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import find_training_loops
from gradfix.analysis.trainstep import literal_number, sum_reduced
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
# A summed loss divided by less than this may be a mean over the batch's elements (tokens, pixels, samples);
# no batch holds 1e8 per-element losses, so a larger divisor is a scale even on a sum.
MAX_COUNT = 1e8


class ConstantLossScale(Rule):
    id = "GF201"
    name = "constant-loss-scale"
    summary = "The whole loss is divided by a large literal (or multiplied by a tiny one) before backward()"
    default_options = {"threshold": 1000.0}
    docs = RuleDocs(
        what=(
            "Finds a numeric literal divisor >= `threshold` (default 1e3), or a multiplier <= 1/threshold, applied "
            "to the whole loss that reaches `.backward()`, `scaler.scale(...)` or `accelerator.backward(...)`. "
            "Non-literal divisors (`/ accum_steps`, `/ len(loader)`, `/ num_tokens`), weights on one term "
            "(`ce + kd / 1000`) and metrics that never reach backward are left alone. So is any divisor of a loss the "
            "file shows to be summed rather than averaged (`F.cross_entropy(..., reduction=\"sum\") / 4096`, a "
            "criterion built with `reduction=\"sum\"` or `size_average=False`, `(per_token * mask).sum() / 2048`, "
            "a name bound to one of those): dividing a sum by the batch or token count makes it a mean, and "
            "removing the divisor would multiply every gradient by that count (training diverges to NaN). A divisor "
            "of 1e8 or more is still reported on a sum (`model(x).sum() / 1e9`): no batch holds that many "
            "per-element losses."
        ),
        why=(
            "Every gradient shrinks by the same factor. Measured (torch 2.13, CPU, the first seed's net, loss / 1e9): "
            "with SGD the parameters stay bitwise unchanged (the update is below float32 rounding of the weights); "
            "with Adam (eps 1e-8) the update is 9.66e-5 of normal because the gradients fall below eps; in fp16 the "
            "loss and 100% of the gradients are exactly 0; `clip_grad_norm_` reports 2.1e-11 and never clips. "
            "Scaling a loss only acts like scaling the learning rate for plain SGD."
        ),
        example="loss = loss_fn(logits, targets) / 1000000000\nloss.backward()",
        fixed_example="loss = loss_fn(logits, targets)\nloss.backward()",
        fix="Removes the factor (`loss /= 1e9` disappears). Fold any intended scale into the learning rate.",
        fix_safety="Unsafe by design: it changes every gradient on purpose. Applied by default when the verifier shows the hazard in the original (`fixes-hazard`).",
        verification=(
            "`scale(c)`: in float64, the rewrite's gradients equal c times the original's (norm-relative 1e-9), "
            "then it measures whether the original shows the hazard: gradients with rms below Adam's eps, or an SGD "
            "step (lr 0.1, float32) that leaves most weights unchanged: `fixes-hazard`; otherwise "
            "`changes-behaviour` (e.g. a sum-to-mean normalisation), applied only with `--unsafe-fixes`. A loss in a "
            "script's or notebook's module-level loop is measured by running one iteration of that loop on the model, "
            "loss function and optimizer the file builds, with a synthetic batch. When the loss is computed in code "
            "the verifier cannot run (a model from a cell that is not in the file), it checks the loss expression with "
            "the kept part held as a tensor, says why, and gives `changes-behaviour` (no update size was measured)."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        threshold = float(self.options["threshold"])
        for scope in ctx.index.scopes():
            flow = ctx.index.flow(scope)
            for tl in find_training_loops(flow):
                finding = self._inspect(ctx, flow, tl, threshold)
                if finding is not None:
                    yield finding

    def _scaled(self, expr, threshold):
        """(kept operand, factor) when `expr` scales its operand by a literal past the threshold."""
        if not isinstance(expr, cst.BinaryOperation):
            return None
        op = expr.operator
        if isinstance(op, cst.Divide):
            v = literal_number(expr.right)
            if v is not None and v >= threshold:
                return expr.left, v
        if isinstance(op, cst.Multiply):
            for lit, kept in ((expr.right, expr.left), (expr.left, expr.right)):
                v = literal_number(lit)
                if v is not None and 0 < v <= 1.0 / threshold and literal_number(kept) is None:
                    return kept, 1.0 / v
        return None

    def _message(self, factor: float) -> str:
        return (f"the whole loss is scaled down {factor:g}-fold before backward(): every gradient shrinks by "
                f"{factor:g}, so SGD steps vanish under float32 rounding, Adam's update falls below eps and fp16 "
                f"gradients underflow to zero; the fix removes the factor")

    def _inspect(self, ctx, flow, tl, threshold):
        loss = tl.loss
        scaled = self._scaled(loss, threshold)
        if scaled is not None:
            kept, factor = scaled
            if factor < MAX_COUNT and sum_reduced(kept, flow):
                return None  # `ce_sum / 4096`: a summed loss divided by its token count is a mean
            if loss.lpar and not isinstance(kept, _ATOMS) and not kept.lpar:
                replacement = kept.with_changes(lpar=loss.lpar, rpar=loss.rpar)
            else:
                replacement = kept
            return ctx.finding(loss, self._message(factor), self._fix(ctx, loss, kept, factor, [Edit(loss, replacement)]))
        if not isinstance(loss, cst.Name):
            return None
        b = flow.load_binding.get(id(loss))
        if b is None:
            return None
        augs = [(i, n) for i, n in b.mutations if i < tl.backward.index and isinstance(n, cst.AugAssign)]
        if augs:
            i, node = augs[-1]
            stmt_scaled = None
            if isinstance(node.operator, cst.DivideAssign):
                v = literal_number(node.value)
                if v is not None and v >= threshold:
                    stmt_scaled = v
            elif isinstance(node.operator, cst.MultiplyAssign):
                v = literal_number(node.value)
                if v is not None and 0 < v <= 1.0 / threshold:
                    stmt_scaled = 1.0 / v
            if stmt_scaled is None or (stmt_scaled < MAX_COUNT and sum_reduced(loss, flow)):
                return None  # `loss = ce_sum; loss /= 4096`
            st = flow.steps[i]
            return ctx.finding(node, self._message(stmt_scaled),
                               self._fix(ctx, node, cst.Name(loss.value), stmt_scaled, _remove(st, node),
                                         old_expr=f"{loss.value} / {stmt_scaled!r}"))
        if b.step < 0 or b.value is None:
            return None
        value = b.value
        scaled = self._scaled(value, threshold)
        if scaled is None:
            return None
        kept, factor = scaled
        if factor < MAX_COUNT and sum_reduced(kept, flow):
            return None
        st = flow.steps[b.step]
        if isinstance(kept, cst.Name) and kept.value == loss.value and isinstance(st.node, cst.Assign):
            edits = _remove(st, st.node)  # `loss = loss / 1e9` goes away
        else:
            edits = [Edit(value, kept)]
        return ctx.finding(value, self._message(factor), self._fix(ctx, value, kept, factor, edits))

    def _fix(self, ctx, old, kept, factor, edits, old_expr=None):
        old_code = old_expr or ctx.code(old).strip()
        kept_code = ctx.code(kept).strip()
        contract = {"kind": "scale", "factor": factor, "expr_old": old_code, "expr_new": kept_code, "opaque": [kept_code]}
        return ctx.fix(f"remove the {factor:g} loss scale", edits, Safety.UNSAFE, contract)


def _remove(st, small) -> list[Edit]:
    """Remove one small statement, or its whole line when it stands alone."""
    line = st.line
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return [Edit(line, cst.RemovalSentinel.REMOVE)]
    return [Edit(small, cst.RemovalSentinel.REMOVE)]


RULE = ConstantLossScale
