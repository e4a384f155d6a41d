"""Reaching definitions over a Flow's steps: which bindings of a name may be the one read at a step.

A Flow keeps one current binding per name, the last in source order, so after
`out = act(h)`; `if use_dropout: out = drop(out)`; `out += x` it reads `out` as the dropout's result. When
the `if` does not run, the activation's result is what `+=` writes into. `reaching(flow, name, at)` lists
each binding that may be the one read at step `at`, with the `if` chains the path must skip (every test of
the chain false) for it to get there.

Only paths through `if` chains without an `else` are followed: a chain with an `else`, a loop body that `at`
is not inside and an unconditional binding each end the walk, and in each branch of a chain only its last
binding is listed. A binding that may or may not have run for
another reason is treated as if it always ran, so a path is listed only when it exists in the code; the
cost is recall, never precision. Back edges of loops are not followed (they only add bindings).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradfix.analysis.tree import if_branches


@dataclass(frozen=True, eq=False)
class Reach:
    binding: object                 # a flow.Binding
    skipped: tuple                  # the `cst.If` chains whose every test is false on the path


def reaching(flow, name: str, at: int) -> list[Reach]:
    """The bindings of `name` that may be read at step `at`, latest first: the last binding of each branch
    of an if chain between them, then (when no `else` closes the chain) the bindings before it, with that
    chain among their `skipped`. The walk ends at the first binding that surely runs before `at`."""
    here = flow.steps[at]
    inside = set(here.branch)
    chains = _chains(flow)
    skipped: list[cst.If] = []
    seen: dict[int, tuple] = {}        # chain id -> (skipped before it, branches already rebinding the name)
    closed: int | None = None          # a chain no path is shown to go around (an `else`, a loop)
    out: list[Reach] = []
    earlier = [b for b in flow.bindings if b.name == name and b.step < at]
    for b in sorted(earlier, key=lambda b: b.step, reverse=True):
        st = flow.steps[b.step] if b.step >= 0 else None
        if st is not None and flow.exclusive(b.step, at):
            continue
        branch = st.branch if st is not None else ()
        pos = next((i for i, (cid, k) in enumerate(branch) if (cid, k) not in inside), None)
        outer = branch[pos][0] if pos is not None else None
        if closed is not None and outer != closed:
            break  # before a chain every path goes through
        if st is not None and not _within(st.loops, here.loops):
            break  # in a loop `at` is not inside: the loop may run, and no path around it is shown
        if outer is None:
            out.append(Reach(b, tuple(skipped)))
            break
        if outer not in seen:
            chain = chains.get(outer)
            if chain is None:
                break
            seen[outer] = (tuple(skipped), set())
            if _has_else(chain) or not _within(flow.step_of[id(chain)].loops, here.loops):
                closed = outer
            else:
                skipped.append(chain)
        before, rebinding = seen[outer]
        k = branch[pos][1]
        if k in rebinding:
            continue  # a later binding of the same branch replaced it
        out.append(Reach(b, before))
        # an earlier binding of this branch would reach only around the `if`s nested in it after it, whose
        # tests `skipped` does not list: it is not followed
        rebinding.add(k)
    return out


def chain_tests(chain: cst.If) -> list[cst.BaseExpression]:
    """The tests of an if/elif chain, in order."""
    return [owner.test for _k, owner in if_branches(chain) if isinstance(owner, cst.If)]


def steps_in(flow, chains) -> set[int]:
    """The steps inside any of the `chains` (their tests excluded)."""
    ids = {id(c) for c in chains}
    return {st.index for st in flow.steps if any(cid in ids for cid, _k in st.branch)}


def _within(inner: tuple, outer: tuple) -> bool:
    return all(any(l is m for m in outer) for l in inner)


def _has_else(chain: cst.If) -> bool:
    return any(isinstance(owner, cst.Else) for _k, owner in if_branches(chain))


def _chains(flow) -> dict[int, cst.If]:
    """id -> the `If` statement heading each if/elif chain of the flow."""
    cached = flow.__dict__.get("_if_chains")
    if cached is None:
        cached = {}
        elifs = set()
        for st in flow.steps:
            node = st.node
            if isinstance(node, cst.If) and id(node) not in elifs:
                cached[id(node)] = node
                elifs |= {id(owner) for _k, owner in if_branches(node) if owner is not node}
        flow._if_chains = cached
    return cached


__all__ = ["Reach", "reaching", "chain_tests", "steps_in"]
