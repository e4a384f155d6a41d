"""Statement moves for the loop-order rules (GF202-GF210), and their verification contract.

A fix that moves a statement is a removal plus an insertion. When one target holds the
other (the scheduler line inside the batch loop that is the epoch body's last
statement), the inner edit is folded into the outer node's replacement, so the engine
always receives edits on disjoint nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from gradfix.analysis.flow import Kind
from gradfix.analysis.expressions import _walk, code_of, literal_value
from gradfix.analysis.iteration import Iteration, _body, locator
from gradfix.analysis.loopspec import call_spec, module_constants, skeleton
from gradfix.analysis.schedules import scheduler_info
from gradfix.analysis.tree import contains
from gradfix.model import Edit


@dataclass
class Op:
    node: cst.CSTNode
    remove: bool = False
    before: list = field(default_factory=list)
    after: list = field(default_factory=list)
    replace: cst.CSTNode | None = None


def _combine(op_list: list[Op], base: cst.CSTNode):
    before, after, removed, repl = [], [], False, None
    for op in op_list:
        before += op.before
        after += op.after
        removed = removed or op.remove
        if op.replace is not None:
            repl = op.replace
    middle = [] if removed else [repl if repl is not None else base]
    nodes = before + middle + after
    if not nodes:
        return cst.RemovalSentinel.REMOVE
    if len(nodes) == 1 and not before and not after:
        return nodes[0]
    return cst.FlattenSentinel(nodes)


class _Apply(cst.CSTTransformer):
    def __init__(self, ops: list[Op]):
        super().__init__()
        self.by_id: dict[int, list[Op]] = {}
        for op in ops:
            self.by_id.setdefault(id(op.node), []).append(op)

    def on_leave(self, original_node, updated_node):
        ops = self.by_id.get(id(original_node))
        if not ops:
            return updated_node
        return _combine(ops, updated_node)


def compose(ops: list[Op]) -> list[Edit]:
    """Edits on disjoint nodes that perform every op."""
    nodes = []
    for op in ops:
        if not any(n is op.node for n in nodes):
            nodes.append(op.node)
    roots = [n for n in nodes if not any(m is not n and contains(m, n) for m in nodes)]
    edits = []
    for root in roots:
        own = [op for op in ops if op.node is root]
        inner = [op for op in ops if op.node is not root and contains(root, op.node)]
        base = root.visit(_Apply(inner)) if inner else root
        edits.append(Edit(root, _combine(own, base)))
    return edits


def moved(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """The line as it is inserted elsewhere: its comments travel with it, blank lines do not."""
    return line.with_changes(leading_lines=[l for l in line.leading_lines if l.comment is not None])


def parse_line(code: str) -> cst.SimpleStatementLine:
    stmt = cst.parse_statement(code if code.endswith("\n") else code + "\n")
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt


def single(line) -> bool:
    """A statement line holding exactly one small statement."""
    return isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1


def same_block(index, a, b) -> bool:
    return index.parents.get(a) is index.parents.get(b)


def block_lines(index, line) -> list:
    parent = index.parents.get(line)
    return list(getattr(parent, "body", [])) if parent is not None else []


def epoch_end_anchor(it: Iteration) -> tuple[cst.CSTNode | None, str]:
    """The last statement of the epoch loop's body, where a per-epoch step goes; None with why not."""
    if it.epoch_loop is None:
        return None, "the batch loop has no enclosing epoch loop in this scope"
    body = _body(it.epoch_loop)
    if not body or not isinstance(it.epoch_loop.body, cst.IndentedBlock):
        return None, "the epoch loop's body is not an indented block"
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Return, cst.Break, cst.Continue, cst.Raise)) for s in last.body):
        return None, "the epoch loop's body ends with a jump"
    # a `continue` of the epoch loop would skip a step placed at the end
    for node in _walk(it.epoch_loop.body):
        if isinstance(node, cst.Continue) and _owning_loop(it.index, node) is it.epoch_loop:
            return None, "the epoch loop has a `continue` that would skip a step at its end"
    return last, ""


def _owning_loop(index, node):
    cur = index.parents.get(node)
    while cur is not None:
        if isinstance(cur, (cst.For, cst.While)):
            return cur
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
            return None
        cur = index.parents.get(cur)
    return None


def mentions(node, words: tuple[str, ...]) -> bool:
    text = code_of(node)
    return any(w in text for w in words)


# --------------------------------------------------------------------------- contract


def train_loop_contract(it: Iteration, **extra) -> dict:
    """The verifier's `train-loop` contract for a fix inside this iteration (see checks_loop.py)."""
    contract = {"kind": "train-loop", "loop": locator(it), "skeleton": skeleton(it)}
    contract.update(optimizer_and_scheduler(it))
    env = constants_for(it, contract["skeleton"])
    if env:
        contract["env"] = env
    contract.update(extra)
    return contract


def with_rewritten_reading(contract: dict, rewritten: str, project) -> dict:
    """The contract with `skeleton_after`: the rewritten file's iteration as the rule would read it with the
    project's other files (`project`, a ProjectView). The verifier's worker reads each file alone; where the
    project changes the reading (a criterion class from another file is a module, a metric object handed in
    holds no graph), it takes the rule's reading of both versions instead of refusing a verdict."""
    loop = contract.get("loop")
    if contract.get("kind") != "train-loop" or not loop or project is None or contract.get("skeleton") is None:
        return contract
    from gradfix.analysis import FileIndex
    from gradfix.analysis.iteration import locate

    try:
        index = FileIndex(cst.MetadataWrapper(cst.parse_module(rewritten), unsafe_skip_copy=True), project=project)
        it = locate(index, loop["scope"], int(loop["ordinal"]))
        after = skeleton(it) if it is not None else None
    except Exception:  # noqa: BLE001 - the worker reads it again and reports what fails
        return contract
    return contract if after is None else {**contract, "skeleton_after": after}


def optimizer_and_scheduler(it: Iteration) -> dict:
    out: dict = {"optimizer": None, "scheduler": None, "scaler": None}
    opts = sorted(it.optimizers_stepped())
    if len(opts) == 1:
        b = it.optimizer_binding(opts[0])
        if b is not None:
            out["optimizer"] = call_spec(b.value, b.ctor, index=it.index)
        else:
            out["optimizer"] = {"ctor": None, "name": opts[0]}
    scheds = {e.recv for e in it.events + it.epoch_events if e.op == "sched" and e.recv}
    if len(scheds) == 1:
        name = scheds.pop()
        info = scheduler_info(it, name)
        spec = call_spec(info.call, info.ctor, index=it.index) or {"ctor": None}
        spec.update(kind=info.kind, why=info.why, name=name)
        out["scheduler"] = spec
    elif len(scheds) > 1:
        out["scheduler"] = {"ctor": None, "kind": "unknown", "why": "several schedulers", "several": sorted(scheds)}
    scaled = {e.info.get("scaled") for e in it.events if e.op in ("backward", "step") and e.info.get("scaled")}
    if scaled:
        name = sorted(scaled)[0]
        enabled = scaler_enabled(it, name)
        built = any(b.kind is Kind.SCALER for b in it.bindings(name))
        out["scaler"] = {"name": name, "enabled": enabled, "built": built}
    return out


def constants_for(it: Iteration, sk: dict) -> dict:
    """Module-level literal constants named by the skeleton's clip thresholds (`max_norm=grad_clip`)."""
    consts = module_constants(it.index)
    used = set()
    for e in sk["batch"]:
        for key in ("value_src", "args_src"):
            src = e.get(key)
            if src:
                used |= set(re.findall(r"[A-Za-z_]\w*", src))
    return {k: consts[k] for k in sorted(used) if k in consts}


def scaler_enabled(it: Iteration, name: str):
    """True/False when the GradScaler's `enabled=` is literal (True when absent), None when unknown."""
    bs = [b for b in it.bindings(name) if b.kind is Kind.SCALER and isinstance(b.value, cst.Call)]
    if not bs:
        return None
    values = set()
    for b in bs:
        arg = None
        for a in b.value.args:
            if a.keyword is not None and a.keyword.value == "enabled":
                arg = a.value
        if arg is None:
            values.add(True)
            continue
        ok, v = literal_value(arg)
        if not ok and isinstance(arg, cst.Name):
            consts = module_constants(it.index)
            ok, v = arg.value in consts, consts.get(arg.value)
        values.add(bool(v) if ok else None)
    return values.pop() if len(values) == 1 else None
