"""Which `backward()` walks the graph that saved a tensor: an in-place write breaks nothing autograd needs when
every graph that saved the tensor was walked and freed before it, or when no later backward reaches that graph.
Facts for the in-place rules (GF101), kept out of the rule so that each reads top to bottom."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.loops import backward_target, calls_backward
from gradfix.analysis.reaching import reaching
from gradfix.analysis.trainstep import names_in
from gradfix.analysis.tree import walk


def backward_ran_since(flow, saved_steps: list[int], step: int) -> bool:
    """A backward() runs after the last save and before `step`, and none runs after `step` in the
    scope's order: `probs.mul_(100)` for logging after `loss.backward()` changes nothing autograd needs.
    Or each save's graph was walked and freed before `step` (`graphs_freed`): later backward() calls may
    run, but none can walk those graphs again."""
    if not saved_steps:
        return False
    backwards = [st.index for st in flow.steps if calls_backward(st, flow)]
    if any(max(saved_steps) < b < step for b in backwards) and not any(b > step for b in backwards):
        return True
    return graphs_freed(flow, saved_steps, step)


def graphs_freed(flow, saved_steps: list[int], step: int) -> bool:
    """Every save is followed, before `step`, by a backward() that walks its graph and frees it: the
    backpropagated value is built, by this scope's names bound before that backward, from what the saving
    statement computed (`out = F.conv2d(x, w)`; `out.backward()`; `w += 1`; `out = F.conv2d(x, w)`;
    `out.backward()`: the second backward walks a new graph that saved `w` after the change). A backward
    with `retain_graph` / `create_graph` (or positional options) keeps its graph and does not count, nor
    does one in a branch or a loop `step` is not inside (it may not run). Walking a freed graph again raises
    whether or not the tensor changed, so the in-place op breaks nothing."""
    here = flow.steps[step]
    pending = set(saved_steps)
    for st in flow.steps[min(saved_steps) + 1:step]:
        if not pending:
            break
        if not calls_backward(st, flow) or not set(st.branch) <= set(here.branch) or \
                any(all(l is not m for m in here.loops) for l in st.loops):
            continue
        for node in walk(st.node):
            if not isinstance(node, cst.Call):
                continue
            found = backward_target(node, flow)
            if found is None or keeps_graph(node):
                continue
            pending -= statements_reached(flow, found[0], st.index) & {s for s in pending if s < st.index}
    return not pending


def keeps_graph(call: cst.Call) -> bool:
    """`loss.backward(retain_graph=True)`, `backward(g, True)`: options that keep the graph (or may)."""
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) > 1 or any(a.keyword is not None and a.keyword.value in ("retain_graph", "create_graph")
                                      for a in call.args)


def statements_reached(flow, target: cst.BaseExpression, at: int) -> set[int]:
    """The steps whose bindings the value `target`, read at step `at`, is built from: the bindings of its
    names that may reach `at` (analysis/reaching.py), then theirs, back through the scope."""
    reached: set[int] = set()
    seen: set[tuple[str, int]] = set()
    todo = [(name, at) for name in names_in(target)]
    while todo:
        name, where = todo.pop()
        if (name, where) in seen:
            continue
        seen.add((name, where))
        for r in reaching(flow, name, where):
            b = r.binding
            if b.step < 0 or b.step in reached:
                continue
            reached.add(b.step)
            if isinstance(b.value, cst.CSTNode):
                todo.extend((n, b.step) for n in names_in(b.value))
    return reached


_BUILTINS = frozenset({"True", "False", "None", "print", "len", "range", "float", "int", "sum", "min", "max"})


def later_backwards_skip(index, flow, binding, step: int) -> bool:
    """Every backward() after `step` backpropagates a value built, by the names of this scope, without the
    written tensor or a view of it: `ce = F.cross_entropy(x, y)` first, then a separate `p = F.softmax(x)`
    edited in place to compare with `x.grad`, then `ce.backward()`; the graph that saved `p` is never
    walked. A name the scope does not bind (a parameter is bound; a global or attribute is not), other than an
    import, or a container that is handed the tensor (`outs.append(p)`), means the graph is not shown."""
    held = {b.name for b in flow.bindings if b.shares_storage(binding)}
    targets = []
    for st in flow.steps[step + 1:]:
        if not calls_backward(st, flow):
            continue
        for node in walk(st.node):
            if isinstance(node, cst.Call):
                t = backward_target(node, flow)
                if t is not None:
                    targets.append(t[0])
    if not targets:
        return False
    values: dict[str, list] = {}
    for b in flow.bindings:
        values.setdefault(b.name, []).append(b.value)
    reads: set[str] = set()
    todo = [n for t in targets for n in names_in(t)]
    while todo:
        name = todo.pop()
        if name in reads:
            continue
        reads.add(name)
        if name in held:
            return False
        if name not in values:
            if name not in index.imports.aliases and name not in _BUILTINS:
                return False
            continue
        for value in values[name]:
            if isinstance(value, cst.CSTNode):
                todo.extend(names_in(value))
    for st in flow.steps:  # `outs.append(p)`, `store.update(p)`: the container holds the tensor
        for node in walk(st.node):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                    isinstance(node.func.value, cst.Name) and node.func.value.value in reads - index.imports.modules and \
                    any(names_in(a.value) & held for a in node.args):
                return False
    return True
