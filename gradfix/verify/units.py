"""Which units a change reaches (plan_units) and how several units' outcomes combine."""
from __future__ import annotations


import torch.nn as nn

from .api import verdict_rank
from .runtime import FIXTURE_FILE, Outcome
from .context import Ctx, fixture_hint


# --------------------------------------------------------------------------- unit planning


def plan_units(ctx: Ctx, allow_function_fixture: bool = True) -> tuple[list[str], list[Outcome]]:
    """Which units to run a module check on, plus outcomes for changes that cannot be checked."""
    a = ctx.analysis
    units: list[str] = []
    outcomes: list[Outcome] = []
    if a.changed_classes or a.changed_functions or a.changed_constants:
        ctx.module("new")  # loads both; a rewrite that breaks loading fails here
    for n in a.only_in_one:
        outcomes.append(Outcome("untestable", f"{n} exists in only one version, so there is nothing to compare", n))
    for c in a.changed_classes:
        unreached = a.unreached_changed_methods(c)
        if unreached and set(a.changed_methods.get(c, [])) <= set(unreached):
            meths = ", ".join(f"{c}.{m}" for m in unreached)
            outcomes.append(
                Outcome(
                    "untestable",
                    f"the change is in {meths}, which construction and forward() do not reach, and the verifier runs "
                    f"only those; define fixture_{c}(mod) in {FIXTURE_FILE} returning (a module whose forward calls "
                    f"it, inputs)",
                    c,
                )
            )
        else:
            units.append(c)
    changed_names = set(a.changed_functions) | a.changed_constants
    if changed_names:
        deps = [d for d in a.classes_depending_on(changed_names) if d not in units and d not in a.changed_classes]
        mod = ctx.module("old")
        deps = [d for d in deps if isinstance(getattr(mod, d, None), type) and issubclass(getattr(mod, d), nn.Module)]
        for f in a.changed_functions:
            if allow_function_fixture and ctx.fixture(f) is not None:
                units.append(f)
            elif not deps:
                outcomes.append(
                    Outcome(
                        "untestable",
                        f"function {f}: no call site to build its arguments from; " + fixture_hint(f, "function"),
                        f,
                    )
                )
        consts = sorted(a.changed_constants)
        if consts and not deps:
            outcomes.append(
                Outcome("untestable", f"the changed module-level name(s) {', '.join(consts)} are used by no nn.Module "
                        f"class in the file", consts[0])
            )
        units.extend(deps)
    if a.module_code_changed:
        outcomes.append(
            Outcome(
                "untestable",
                "change is in module-level code, which the verifier does not execute; only changes inside functions "
                "and classes (or loss expressions and train steps the rule describes) can be checked",
                "<module>",
            )
        )
    return units, outcomes


def combine(outcomes: list[Outcome]) -> Outcome:
    if not outcomes:
        return Outcome("untestable", "no unit to check was found in the change", None)
    if len(outcomes) == 1:
        return outcomes[0]
    worst = max(outcomes, key=lambda o: verdict_rank(o.verdict))
    units = ", ".join(dict.fromkeys(o.unit for o in outcomes if o.unit))
    others = [o for o in outcomes if o is not worst]
    tail = "; ".join(f"{o.unit}: {o.verdict}" for o in others)
    return Outcome(worst.verdict, f"{worst.unit}: {worst.detail} (other units: {tail})", units or None)


