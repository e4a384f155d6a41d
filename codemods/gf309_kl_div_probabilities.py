"""GF309 kl-div-probabilities: `kl_div` / `KLDivLoss` given probabilities where it takes log-probabilities (detect only)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.fileindex import strip_moves
from gradfix.analysis.module_ctors import module_ctor_of
from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.params import all_calls, last_name
from gradfix.analysis.probabilities import Probabilities, maybe_criterion_call
from gradfix.rule import Rule, RuleDocs

KL_DIV_FUNCS = frozenset({"torch.nn.functional.kl_div"})
KL_DIV_MODULES = frozenset({"torch.nn.KLDivLoss", "torch.nn.modules.loss.KLDivLoss"})


class KlDivProbabilities(Rule):
    id = "GF309"
    name = "kl-div-probabilities"
    summary = "kl_div's input is a softmax output, or its target's space contradicts log_target"
    docs = RuleDocs(
        what=(
            "Finds calls of `F.kl_div(input, target, ...)`, `nn.KLDivLoss(...)(input, target)` and of a criterion "
            "bound to `nn.KLDivLoss` (a name, `self.kl` built in `__init__`, or a parameter every call of the function "
            "in the file passes one for) where (1) `input` is a softmax output: written inline "
            "(`F.softmax(s / T, dim=1)`, `s.softmax(-1)`), through a name, from an `nn.Softmax` module, or from a "
            "model whose `forward` ends in one (the facts GF308 uses, analysis/probabilities.py); or (2) `target` is "
            "a log_softmax output and the call shows `log_target` off (left out, or `False`); or (3) `target` is a "
            "softmax output and the call shows `log_target=True`. "
            "Left alone: `input` that is a log_softmax output or any other expression (`torch.log(p)`, "
            "`p.clamp_min(1e-8).log()`, a parameter, a value of another file no fact covers, `.softmax(...)` called on a module's "
            "attribute such as `self.head.softmax(x)`, a softmax taken to its log in place before the call, `p.log_()` or "
            "`torch.log(p, out=p)`), a `target` whose "
            "space the rule cannot show, a criterion whose `log_target` it cannot read (built with `**kwargs`, a "
            "non-literal flag, or an attribute or parameter: the target checks need the constructor's keywords; "
            "the input check does not, since `input` is in log space whatever `log_target` says), and functions "
            "named `kl_div` that are not torch's."
        ),
        why=(
            "`kl_div(input, target)` computes `target * (log(target) - input)` pointwise: `input` must already "
            "be log-probabilities. Given probabilities, the result is not a divergence (it goes negative: "
            "`F.kl_div(F.softmax(s), F.softmax(t), reduction='batchmean')` gave -2.03 on a seeded 4x10 batch where "
            "the true value is 0.78) and its gradient maximises `sum(target * p)`, which drives the prediction to "
            "the target's argmax instead of matching the distribution: a distillation loss that teaches hard "
            "labels. A log-probability target read as probabilities makes `log(target)` the log of a negative "
            "number: in torch 2.13 the loss is NaN on every batch (releases before the fix of pytorch#69230 returned 0 "
            "for those entries instead, silently); the gradient reaching `input` stays finite, so training runs "
            "on the wrong objective while the logged loss is NaN. Both are among the most asked-about KLDivLoss "
            "mistakes (\"KLDivLoss is negative\", \"KL loss is NaN\")."
        ),
        example="loss = F.kl_div(F.softmax(student / T, dim=1), F.softmax(teacher / T, dim=1), reduction=\"batchmean\")",
        fixed_example="loss = F.kl_div(F.log_softmax(student / T, dim=1), F.softmax(teacher / T, dim=1), "
                      "reduction=\"batchmean\")",
        fix="Detect only: pass `log_softmax(...)` as the input; pass the target as probabilities, or set "
            "`log_target=True` for log-probabilities.",
        fix_safety="No fix is offered: the rewrite changes the loss's value by design, and which of the two "
                   "arguments the author meant as the model's is theirs to say.",
        verification="None (detect only).",
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): `check` returns early without a `kl_div` or `KLDivLoss` call."""
        return bool(facts.called & {"kl_div", "KLDivLoss"})

    def check(self, ctx):
        index = ctx.index
        calls = all_calls(index)
        if not any(last_name(c.func) in ("kl_div", "KLDivLoss") for c in calls):
            return
        probs = Probabilities(index)
        for node in calls:
            if not maybe_criterion_call(node, index, KL_DIV_FUNCS):
                continue
            fn = index.enclosing(node, (cst.FunctionDef,))
            flow = index.flow(fn if fn is not None else ctx.module)
            log_target = _log_target(node, index, flow)
            if log_target is _NOT_KL:
                continue
            inp = _argument(node, 0, "input")
            if inp is not None:
                found = probs.of(inp, flow)
                if found is not None and found[0] == "softmax":
                    yield ctx.finding(inp, _input_message(ctx, inp, found[1]))
            tgt = _argument(node, 1, "target")
            if tgt is None or log_target is None:
                continue
            found = probs.of(tgt, flow)
            if found is None:
                continue
            if found[0] == "log_softmax" and log_target is False:
                yield ctx.finding(tgt, _target_message(ctx, tgt, found[1], log=True))
            elif found[0] == "softmax" and log_target is True:
                yield ctx.finding(tgt, _target_message(ctx, tgt, found[1], log=False))


_NOT_KL = object()


def _log_target(call: cst.Call, index, flow):
    """What the call shows of `log_target`: True, False, None (unknown), or _NOT_KL when `call` is not a KL
    divergence of torch's."""
    if qualname(call.func, index.imports) in KL_DIV_FUNCS:
        return _flag(call.args)
    ctor = module_ctor_of(index, flow, call.func)
    if ctor not in KL_DIV_MODULES:
        return _NOT_KL
    built = call.func if isinstance(call.func, cst.Call) else None
    if built is None and isinstance(call.func, cst.Name) and flow is not None:
        b = flow.load_binding.get(id(call.func))
        built = b.value if b is not None and isinstance(b.value, cst.Call) else None
    # `nn.KLDivLoss(log_target=True).to(device)`: the constructor's keywords, not the move's
    built = strip_moves(built) if built is not None else None
    if not (isinstance(built, cst.Call) and qualname(built.func, index.imports) in KL_DIV_MODULES):
        return None
    return _flag(built.args)


def _flag(args) -> bool | None:
    if any(a.star for a in args):
        return None            # `**cfg` may set it
    for a in args:
        if a.keyword is not None and a.keyword.value == "log_target":
            v = a.value
            if isinstance(v, cst.Name) and v.value in ("True", "False"):
                return v.value == "True"
            return None
    positional = [a for a in args if a.keyword is None]
    # F.kl_div(input, target, size_average, reduce, reduction, log_target): six positionals set it;
    # KLDivLoss(size_average, reduce, reduction, log_target): four do. Neither is written in practice: unknown.
    if len(positional) >= 4:
        return None
    return False


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:position + 1]):
        return None
    return positional[position].value if len(positional) > position else None


def _origin(ctx, arg, where: str) -> str:
    what, src = shorten(ctx.code(arg), 60), shorten(where, 60)
    return f"`{what}`" + ("" if src == what else f" (`{src}`)")


def _input_message(ctx, arg, where: str) -> str:
    return (f"{_origin(ctx, arg, where)} is a softmax output passed as kl_div's input, which must be "
            f"log-probabilities: the loss is not a divergence (it goes negative) and its gradient pushes the "
            f"prediction to the target's argmax instead of matching the distribution; pass log_softmax(...)")


def _target_message(ctx, arg, where: str, log: bool) -> str:
    if log:
        return (f"{_origin(ctx, arg, where)} is a log_softmax output passed as kl_div's target without "
                f"log_target=True: the target is read as probabilities and log() of its negative values makes the "
                f"loss NaN on every batch; pass log_target=True, or the target's softmax")
    return (f"{_origin(ctx, arg, where)} is a softmax output passed as kl_div's target with log_target=True: the "
            f"target is read as log-probabilities, so exp() of the probabilities is the distribution matched; pass "
            f"log_softmax(...) or drop log_target")


RULE = KlDivProbabilities
