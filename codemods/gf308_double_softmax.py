"""GF308 double-softmax: softmax / log_softmax output fed to `cross_entropy` / `CrossEntropyLoss` (detect only)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.probabilities import CROSS_ENTROPY_FUNCS, Probabilities, cross_entropy_input, \
    maybe_criterion_call
from gradfix.analysis.names import shorten
from gradfix.analysis.params import all_calls, last_name
from gradfix.rule import Rule, RuleDocs


def _short(code: str) -> str:
    return shorten(code, 60)


class DoubleSoftmax(Rule):
    id = "GF308"
    name = "double-softmax"
    summary = "A softmax (or log_softmax) output is passed to cross_entropy, which applies log_softmax itself"
    docs = RuleDocs(
        what=(
            "Finds the input (first argument) of `F.cross_entropy(...)`, `nn.CrossEntropyLoss()(...)` or a "
            "criterion bound to `nn.CrossEntropyLoss` (also a parameter, `def train(model, criterion, ...)`, when "
            "every call of the function in the file passes one, or an attribute `self.crit` that `__init__` stores from a "
            "parameter whose default is `nn.CrossEntropyLoss()`, when every construction of the class in the file, "
            "at least one, leaves that default: `Evaluator()`; a method called on an instance made inline, "
            "`Evaluator().evaluate(model, x)`, counts as a call of that method) when it is a softmax or log_softmax output: written inline, "
            "through a name, from `nn.Softmax`/`nn.LogSoftmax` modules, or from a model whose `forward` returns "
            "one (a model class of the file, or an `nn.Sequential` ending in `nn.Softmax`, also built from a "
            "layer list, `nn.Sequential(*layers)`, returned by a factory function of the file, also one that builds "
            "an empty `nn.Sequential()` and fills it with top-level `add_module(...)` statements, the last adding "
            "the softmax, and uses the name for nothing else, or wrapped by "
            "`torch.compile`; the model called directly or through `model.forward(x)`), a model class of the file returned by a factory of the file, a model class of "
            "another checked file whose forward's one `return` (its last statement) gives a softmax output "
            "(`probs = self.softmax(logits); return probs`), and what a function of another checked file returns "
            "when every path returns an `nn.Sequential` ending in a softmax or such a class, and the element of a tuple-returning model's output that is one "
            "(`score, cls = disc(img)`), and a model parameter (`def training_routine(net, ...)`, also after "
            "`net = net.cuda()`) when every call of the function, all of them in the file, passes such a model (a name "
            "bound to one, or the call of such a factory written inline, `fit(build_model(...), data)`) "
            "(a call passing another model, or a call from another file, leaves it unknown). A forward whose softmax "
            "runs only under a test of one of its parameters (`if apply_softmax: x = F.softmax(x, dim=1)`) counts "
            "only at a call that is shown to take that branch: the flag passed as `True` (by keyword or position), "
            "or left out with a default that is on. A call that leaves a `False` default or passes `False` gets "
            "the logits, and a flag whose value the call does not show (a variable, `**kwargs`) is unknown: "
            "both are left alone, because an inference helper turning the flag on says nothing about training. "
            "A submodule call is judged by its constructor, not its name: `self.softmax(x)` with `self.softmax = "
            "nn.LogSoftmax(dim=1)` is a log_softmax output, and one whose constructor the file cannot see is unknown. "
            "Left alone: "
            "`nll_loss` after `log_softmax` (correct), softmax probabilities used elsewhere while the loss gets "
            "the logits, probabilities fed to losses that expect them (`binary_cross_entropy`, `kl_div`), a "
            "criterion parameter whose callers pass different losses or that no call in the file shows, and a "
            "softmax of soft *targets* (the second argument). A class redefined further down a notebook or script "
            "(logits first, a softmax head later) is read as the definition in force where the model is built and "
            "called, the last one in the cells above; a later redefinition says nothing about the cells before it."
        ),
        why=(
            "`cross_entropy` computes `log_softmax` of its input. Given probabilities, it applies a second softmax "
            "to values in [0, 1]: the loss saturates near log(C) and the gradients shrink by a factor that grows "
            "with the number of classes C (measured on a linear head: about 4-10x for C=2, 10-20x for C=10, 50-75x "
            "for C=100, over 100x for C=1000), so training plateaus; the message names no single factor, because "
            "the rule does not know C. Given log-probabilities, the result is unchanged "
            "(log_softmax is idempotent along the same dim) but the code usually meant `nll_loss`, and along a "
            "different dim it is wrong."
        ),
        example="probs = F.softmax(model(x), dim=1)\nloss = F.cross_entropy(probs, y)",
        fixed_example="logits = model(x)\nloss = F.cross_entropy(logits, y)",
        fix="Detect only: pass the logits (keep the softmax for whatever uses the probabilities), or use `nll_loss` on log-probabilities.",
        fix_safety="No fix is offered.",
        verification="None (detect only).",
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): `check` returns early without a `cross_entropy` or `CrossEntropyLoss`
        call."""
        return bool(facts.called & {"cross_entropy", "CrossEntropyLoss"})

    def check(self, ctx):
        index = ctx.index
        calls = all_calls(index)
        if not any(last_name(c.func) in ("cross_entropy", "CrossEntropyLoss") for c in calls):
            return
        probs = Probabilities(index)
        for node in calls:
            if not maybe_criterion_call(node, index, CROSS_ENTROPY_FUNCS):
                continue
            fn = index.enclosing(node, (cst.FunctionDef,))
            flow = index.flow(fn if fn is not None else ctx.module)
            arg = cross_entropy_input(node, index, flow)
            if arg is None:
                continue
            found = probs.of(arg, flow)
            if found is None:
                continue
            kind, where = found
            yield ctx.finding(arg, self._message(ctx, arg, kind, where))

    def _message(self, ctx, arg, kind, where) -> str:
        what = _short(ctx.code(arg))
        src = _short(where)
        origin = "" if src == what else f" (`{src}`)"
        if kind == "softmax":
            return (f"`{what}` is a softmax output{origin} passed to cross_entropy, which applies log_softmax "
                    f"itself: a second softmax over probabilities saturates the loss near log(C) and shrinks the "
                    f"gradients by a factor that grows with the number of classes (about 4-10x for 2, 50x and "
                    f"more for 100); pass the logits")
        return (f"`{what}` is a log_softmax output{origin} passed to cross_entropy, which applies log_softmax "
                f"again: redundant along the same dim (the loss is unchanged), wrong along another; use nll_loss on "
                f"log-probabilities, or pass the logits")


RULE = DoubleSoftmax
