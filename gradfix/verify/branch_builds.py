"""A receiver built by a conditional expression whose condition the verifier cannot evaluate, checked in each branch.

`l2_dist = nn.CosineSimilarity(dim=1) if args.cos_sim else nn.PairwiseDistance(2)`, where `args` is parsed by
module-level code the verifier does not run (or `dist_type` is a parameter of the function): building the receiver
raises NameError, though either branch builds without the condition. Which branch the project takes is not known, so
the rewrite must hold in both: each branch is built and checked as its own setup, and the verdict is definitive only
when both are (the same verdict in both, or the one that is not `equivalent` when they differ, with both said in the
detail). Only for a name the condition reads and neither branch does; only a plain `recv = A if C else B` as the
setup's assignment of the receiver (nested conditionals included, each level split the same way).
"""

from __future__ import annotations

import ast
import re

from .lean_namespace import reads

_NAME = re.compile(r"name '(\w+)'")


def branches(setup: str, recv: str, detail: str) -> tuple[list[str], str] | None:
    """(the setups of the branches, the condition's text) when `detail` (why building `recv` failed) names a
    name read only by the condition of the conditional expression that assigns `recv`; else None."""
    try:
        tree = ast.parse(setup)
    except SyntaxError:
        return None
    at = next((i for i, s in enumerate(tree.body) if isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == recv and isinstance(s.value, ast.IfExp)),
              None)
    m = _NAME.search(detail)
    if at is None or m is None:
        return None
    missing = m.group(1)
    value = tree.body[at].value
    alts: list[ast.expr] = []
    conds: list[ast.expr] = []

    def split(e: ast.expr) -> None:
        if isinstance(e, ast.IfExp):
            conds.append(e.test)
            split(e.body)
            split(e.orelse)
        else:
            alts.append(e)

    split(value)
    cond_names = set().union(*(reads(c) for c in conds))
    if missing not in cond_names or any(missing in reads(a) for a in alts) or len(alts) > 4:
        return None
    lines = setup.splitlines()
    stmt = tree.body[at]
    out = []
    for a in alts:
        one = ast.Assign(targets=[ast.Name(id=recv, ctx=ast.Store())], value=a)
        text = ast.unparse(ast.fix_missing_locations(one))
        out.append("\n".join(lines[: stmt.lineno - 1] + [text] + lines[stmt.end_lineno:]))
    return out, " / ".join(ast.unparse(c) for c in conds)


def combine(outcomes: list, cond: str, recv: str, make_outcome):
    """One verdict from the branches' outcomes (module docstring)."""
    shown = "; ".join(f"branch {i}: {o.verdict}: {o.detail.rstrip('.')}" for i, o in enumerate(outcomes, 1))
    head = (f"`{recv}` is built by a conditional expression whose condition (`{cond}`) the verifier cannot evaluate, "
            f"so each branch was checked")
    stuck = [o for o in outcomes if o.verdict == "untestable"]
    unit = outcomes[0].unit
    if stuck:
        return make_outcome("untestable", f"{head}, and not every branch could be: {shown}", unit)
    verdicts = {o.verdict for o in outcomes}
    if len(verdicts) == 1:
        return make_outcome(outcomes[0].verdict, f"{head}: {shown}", unit)
    other = next(o for o in outcomes if o.verdict != "equivalent")
    return make_outcome(other.verdict, f"{head}; the branches differ: {shown}", unit)
