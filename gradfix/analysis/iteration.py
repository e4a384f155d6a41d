"""One training iteration as an ordered list of events, branch-aware.

`find_training_loops` (loops.py) says where a backward call sits; this module reads
the whole iteration around it in source order: zero_grad, forward, backward, unscale,
clip, optimizer step, scaler update, scheduler step, loss accumulation and gradient
ops, each with the `if` branches it runs under. Events in exclusive branches
(`if use_amp: ... else: ...`) are never "before" one another, which the scope's
linear Flow cannot tell.

The loop-order rules (GF202-GF210) ask their questions here, and the verifier's
train-loop check (gradfix/verify/checks_loop.py) re-reads both versions of a file
with `skeleton()` to render them on a synthetic model. Everything here is static;
nothing imports torch.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst

from gradfix.analysis.tree import children, contains, preorder_span, preorder_spans_table, walk

from gradfix.analysis import torchapi
from gradfix.analysis.flow import Binding, Flow, Kind
from gradfix.analysis.loops import (
    TrainingLoop, backward_target, is_model_call, is_optimizer_step, training_loops,
)
from gradfix.analysis.names import chain_root, dotted, qualname
from gradfix.analysis.trainstep import literal_number, loss_expressions, names_in

CLIP_NORM = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_norm",
})
CLIP_VALUE = frozenset({"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"})
SCALER_CTORS = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler",
                          "torch.amp.grad_scaler.GradScaler", "torch.cpu.amp.GradScaler"})

# Schedulers whose period is counted in epochs by convention (the PyTorch docs step them per epoch).
EPOCH_SCHEDULERS = frozenset({"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                              "CosineAnnealingWarmRestarts"})
# Built to be stepped per optimizer step.
BATCH_SCHEDULERS = frozenset({"OneCycleLR", "CyclicLR"})
# Period arguments of the epoch schedulers: (keyword, positional index after the optimizer).
PERIOD_ARGS = {"StepLR": ("step_size", 1), "MultiStepLR": ("milestones", 1), "CosineAnnealingLR": ("T_max", 1),
               "CosineAnnealingWarmRestarts": ("T_0", 1), "ExponentialLR": ("gamma", 1)}
# Names and calls that count optimizer steps, not epochs: len(loader), total_steps, max_iter, num_batches...
_ITERATION_RE = re.compile(r"len\(|iter|batch|loader|steps|updates|samples", re.IGNORECASE)

# Out-of-place tensor methods that have an in-place twin `m_` (same arguments).
OUT_OF_PLACE = frozenset(v for v in torchapi.INPLACE_METHODS.values() if v)


# --------------------------------------------------------------------------- events


@dataclass(eq=False)
class Event:
    op: str                      # zero_grad forward backward unscale clip step update sched accumulate grad_op helper opaque
    node: cst.CSTNode            # the call, or the small statement for statement-level events
    small: cst.BaseSmallStatement
    line: cst.CSTNode            # the SimpleStatementLine holding `small`
    path: tuple                  # ((If/Try node, branch index), ...) between the iteration's body and the event
    nested: tuple                # loops inside the iteration around the event
    order: int
    recv: str | None = None      # optimizer / scheduler / scaler / model source text
    info: dict = field(default_factory=dict)

    def compatible(self, other: "Event") -> bool:
        """Both can run in the same iteration (no `if`/`else` separates them)."""
        mine = {id(n): b for n, b in self.path}
        return all(mine.get(id(n), b) == b for n, b in other.path)

    @property
    def conditional(self) -> bool:
        return bool(self.path)


def _post_order_calls(node: cst.CSTNode):
    """Calls in evaluation order: arguments and receivers before the call itself. Read off the
    file's pre-order (a call's subtree is the slice after it), with exact type tests: an
    isinstance against libcst's abstract-base classes costs ten times as much."""
    span = preorder_span(node)
    if span is None:
        return _post_order_calls_walk(node)
    order, i, end = span
    spans = preorder_spans_table()
    if i + 1 < end and spans[id(order[i + 1])][0] is not order:
        return _post_order_calls_walk(node)  # the module: its statements keep pre-orders of their own
    out: list = []
    pending: list = []                       # (call, end of its subtree), innermost last
    while i < end:
        while pending and i >= pending[-1][1]:
            out.append(pending.pop()[0])
        n = order[i]
        t = type(n)
        if t is cst.Lambda or t is cst.FunctionDef or t is cst.ClassDef:
            i = spans[id(n)][2]
            continue
        if t is cst.Call:
            pending.append((n, spans[id(n)][2]))
        i += 1
    while pending:
        out.append(pending.pop()[0])
    return out


def _post_order_calls_walk(node: cst.CSTNode):
    out = []
    stack: list = [(node, False)]
    while stack:
        n, done = stack.pop()
        if done:
            out.append(n)
            continue
        t = type(n)
        if t is cst.Lambda or t is cst.FunctionDef or t is cst.ClassDef:
            continue
        if t is cst.Call:
            stack.append((n, True))
        stack.extend((c, False) for c in reversed(children(n)))
    return out


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node).strip()


def literal_value(expr: cst.BaseExpression):
    """A Python literal (numbers, strings, True/False/None, tuples/lists of those), inf forms included.
    Returns (ok, value)."""
    text = code_of(expr)
    if text in ("float('inf')", 'float("inf")', "math.inf", "torch.inf", "np.inf", "numpy.inf", "inf"):
        return True, float("inf")
    if text in ("float('-inf')", 'float("-inf")', "-math.inf", "-torch.inf", "-np.inf"):
        return True, float("-inf")
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    v = literal_number(expr)
    if v is not None:
        return True, v
    return False, None


def _arg(call: cst.Call, index: int, keyword: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if index < len(pos):
        return pos[index].value
    return None


def _grad_chain(expr) -> tuple[str, cst.BaseExpression] | None:
    """("grad", root) for `p.grad`, `p.grad.data`; ("data", root) for `p.data`; None otherwise."""
    node = expr
    seen_data = False
    while isinstance(node, cst.Attribute):
        if node.attr.value == "grad":
            return "grad", node.value
        if node.attr.value == "data":
            seen_data = True
        node = node.value
        if isinstance(node, cst.Subscript):
            node = node.value
    if seen_data and isinstance(expr, cst.Attribute):
        base = expr
        while isinstance(base, cst.Attribute) and base.attr.value != "data":
            base = base.value
        if isinstance(base, cst.Attribute):
            return "data", base.value
    return None


# --------------------------------------------------------------------------- the iteration


class Iteration:
    """The events of one training loop's iteration (`tl.loop`'s body, or the scope for a straight step)."""

    def __init__(self, index, scope, flow: Flow, tl: TrainingLoop, ordinal: int):
        self.index = index
        self.scope = scope
        self.flow = flow
        self.tl = tl
        self.ordinal = ordinal
        self.scope_name = scope_name(index, scope)
        self.loop = tl.loop
        self.events: list[Event] = []
        self._order = 0
        self.other_backward_loops: set[int] = set()
        if self.loop is not None:
            for node in _walk(self.loop.body):
                if (type(node) is cst.For or type(node) is cst.While) and node is not self.loop:
                    if any(backward_target(c, flow) is not None for c in _calls_in(node)) and \
                            not contains(node, tl.backward_call):
                        self.other_backward_loops.add(id(node))
            self._block(_body(self.loop), (), (), self.events)
        else:
            self._block(_body(scope), (), (), self.events)
        self.events = self._resolve_calls(self.events)
        self.backward = next((e for e in self.events if e.op == "backward" and e.node is tl.backward_call), None)
        # the enclosing (epoch) loop inside this scope
        self.epoch_loop = None
        self.epoch_events: list[Event] = []
        if self.loop is not None:
            cur = index.parents.get(self.loop)
            while cur is not None and cur is not scope:
                if isinstance(cur, (cst.For, cst.While)):
                    self.epoch_loop = cur
                    break
                if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
                    break
                cur = index.parents.get(cur)
            if self.epoch_loop is not None:
                self._epoch_walk(_body(self.epoch_loop))
                self.epoch_events = self._resolve_calls(self.epoch_events)

    # -- walking ---------------------------------------------------------
    def _block(self, stmts, path, nested, out, skip=None) -> None:
        start = len(out)
        self._block_inner(stmts, path, nested, out, skip)
        # `continue`/`break` leave the iteration only outside loops nested in it; return/raise always do
        jumps = (cst.Return, cst.Raise) if nested else (cst.Continue, cst.Break, cst.Return, cst.Raise)
        if path and any(isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and
                        any(isinstance(s, jumps) for s in st.body) for st in stmts):
            # a branch that leaves the iteration: its events never precede what follows the `if`
            for e in out[start:]:
                e.info["exits"] = True

    def _block_inner(self, stmts, path, nested, out, skip=None) -> None:
        for stmt in stmts:
            if skip is not None and stmt is skip:
                out.append(self._marker(stmt, path, nested))
                continue
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                # a suite (`if c: opt.step()`) is its own "line": the rules' moves need a real statement line
                for small in stmt.body:
                    out.extend(self._small(small, stmt, path, nested))
            elif isinstance(stmt, cst.If):
                branch = 0
                node = stmt
                while True:
                    self._block(_body(node), path + ((stmt, branch),), nested, out, skip)
                    orelse = node.orelse
                    branch += 1
                    if isinstance(orelse, cst.If):
                        node = orelse
                        continue
                    if isinstance(orelse, cst.Else):
                        self._block(_body(orelse), path + ((stmt, branch),), nested, out, skip)
                    break
            elif isinstance(stmt, cst.With):
                self._block(_body(stmt), path, nested, out, skip)
            elif isinstance(stmt, (cst.For, cst.While)):
                if id(stmt) in self.other_backward_loops:
                    continue  # a nested training loop of its own (a GAN's critic loop)
                self._block(_body(stmt), path, nested + (stmt,), out, skip)
            elif isinstance(stmt, cst.Try):
                self._block(_body(stmt), path, nested, out, skip)
                for i, h in enumerate(stmt.handlers):
                    self._block(_body(h), path + ((stmt, i + 1),), nested, out, skip)
                if stmt.orelse is not None:
                    self._block(_body(stmt.orelse), path, nested, out, skip)
                if stmt.finalbody is not None:
                    self._block(_body(stmt.finalbody), path, nested, out, skip)

    def _marker(self, stmt, path, nested) -> Event:
        self._order += 1
        return Event("inner", stmt, stmt, stmt, path, nested, self._order)

    def _epoch_walk(self, stmts) -> None:
        """Events of the epoch loop's body outside the batch loop, marked as before ("start") or after ("end") it."""
        events: list[Event] = []
        self._block(stmts, (), (), events, skip=self.loop)
        where = "start"
        for e in events:
            if e.op == "inner":
                where = "end"
                continue
            if e.nested and any(n is self.loop for n in e.nested):
                continue
            e.info["where"] = where
            self.epoch_events.append(e)

    def _ev(self, op, node, small, line, path, nested, recv=None, **info) -> Event:
        self._order += 1
        return Event(op, node, small, line, path, nested, self._order, recv, dict(info))

    def _small(self, small, line, path, nested) -> list[Event]:
        out: list[Event] = []
        # statement-level events
        if isinstance(small, cst.Assign):
            for t in small.targets:
                tgt = t.target
                if isinstance(tgt, cst.Attribute) and tgt.attr.value == "grad" and \
                        isinstance(small.value, cst.Name) and small.value.value == "None":
                    out.append(self._ev("zero_grad", small, small, line, path, nested, code_of(tgt.value),
                                        target="none"))
                    return out
        acc = self._accumulation(small)
        for call in _post_order_calls(small):
            out.extend(self._call(call, small, line, path, nested))
        if acc is not None:
            out.append(self._ev("accumulate", small, small, line, path, nested, acc[0], how=acc[1]))
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            g = self._grad_op(small.value)
            if g is not None:
                out.append(self._ev("grad_op", small.value, small, line, path, nested, None, **g))
        return out

    def _call(self, call: cst.Call, small, line, path, nested) -> list[Event]:
        flow = self.flow
        func = call.func
        target = backward_target(call, flow)
        if target is not None:
            scaled = None
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and \
                    isinstance(func.value.func, cst.Attribute) and func.value.func.attr.value == "scale":
                scaled = code_of(func.value.func.value)
            return [self._ev("backward", call, small, line, path, nested, None, scaled=scaled,
                             loss=code_of(target[0]))]
        if is_model_call(call, flow):
            return [self._ev("forward", call, small, line, path, nested, code_of(func))]
        if isinstance(func, cst.Attribute):
            meth = func.attr.value
            recv = func.value
            rtext = code_of(recv)
            if meth == "zero_grad":
                ok, stn = (False, None)
                kw = _arg(call, 0, "set_to_none")
                if kw is not None:
                    ok, stn = literal_value(kw)
                target = "opt" if self.kind_of(recv) is Kind.OPTIMIZER or "opt" in rtext.lower() else "model"
                return [self._ev("zero_grad", call, small, line, path, nested, rtext, target=target,
                                 set_to_none=stn if ok and isinstance(stn, bool) else None)]
            if meth == "step":
                if is_optimizer_step(call, flow):
                    if self.is_scaler(recv):
                        opt = code_of(call.args[0].value)
                        return [self._ev("step", call, small, line, path, nested, opt, scaled=rtext)]
                    return [self._ev("step", call, small, line, path, nested, rtext, scaled=None)]
                if self.is_scheduler(recv):
                    return [self._ev("sched", call, small, line, path, nested, rtext, args=bool(call.args))]
                return []
            if meth == "update" and self.is_scaler(recv) and not call.args:
                return [self._ev("update", call, small, line, path, nested, rtext)]
            if meth == "unscale_" and call.args:
                return [self._ev("unscale", call, small, line, path, nested, code_of(call.args[0].value),
                                 scaler=rtext)]
            if meth == "zero_" and _grad_chain(recv) is not None and _grad_chain(recv)[0] == "grad":
                return [self._ev("zero_grad", call, small, line, path, nested,
                                 code_of(_grad_chain(recv)[1]), target="none")]
            if meth in ("clip_grad_norm_", "clip_grad_value_") and qualname(func, self.index.imports) not in \
                    CLIP_NORM | CLIP_VALUE:
                value = _arg(call, 1, "max_norm" if meth == "clip_grad_norm_" else "clip_value")
                return [self._clip(call, small, line, path, nested, "norm" if "norm" in meth else "value", value,
                                   owner=rtext)]
        q = qualname(func, self.index.imports)
        if q in CLIP_NORM:
            return [self._clip(call, small, line, path, nested, "norm", _arg(call, 1, "max_norm"),
                               norm_type=_arg(call, 2, "norm_type"))]
        if q in CLIP_VALUE:
            return [self._clip(call, small, line, path, nested, "value", _arg(call, 1, "clip_value"))]
        helper = self.helper_ops(call)
        if helper:
            return [self._ev("helper", call, small, line, path, nested, code_of(func), ops=sorted(helper))]
        args = set()
        for a in call.args:
            v = a.value
            # the object itself (`opt`, `self.opt`, `model.parameters()`), not a value computed from it (`model(x)`)
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and \
                    v.func.attr.value in ("parameters", "named_parameters"):
                v = v.func.value
            if isinstance(v, (cst.Name, cst.Attribute)):
                r = chain_root(v)
                if r is not None:
                    args.add(r)
        d = dotted(func.value) if isinstance(func, cst.Attribute) else None
        root = d.split(".")[0] if d else None  # `opt.foo()`, not `model(x).gather()` (a value computed from it)
        if root is not None and func.attr.value not in _KNOWN_HARMLESS:
            args.add(root)
        if args:
            # an unknown call handed the optimizer, scaler or model may clear, unscale or clip: decided
            # once the whole iteration is read (see _resolve_calls)
            return [self._ev("call", call, small, line, path, nested, code_of(func), roots=sorted(args))]
        return []

    def _resolve_calls(self, events: list[Event]) -> list[Event]:
        names = self.watched_names()
        out = []
        for e in events:
            if e.op == "call":
                if not set(e.info.get("roots", ())) & names:
                    continue
                e.op = "opaque"
            out.append(e)
        return out

    def _clip(self, call, small, line, path, nested, fn, value, owner=None, norm_type=None) -> Event:
        ok, v = literal_value(value) if value is not None else (False, None)
        nt_ok, nt = literal_value(norm_type) if norm_type is not None else (True, 2.0)
        return self._ev("clip", call, small, line, path, nested, owner, fn=fn,
                        value=float(v) if ok and isinstance(v, (int, float)) else None,
                        value_src=code_of(value) if value is not None else None,
                        norm_type=float(nt) if nt_ok and isinstance(nt, (int, float)) else None, owner=owner)

    def _grad_op(self, call: cst.Call) -> dict | None:
        return grad_op_info(call)

    def _accumulation(self, small) -> tuple[str, str] | None:
        """(total name, how) for `total += <loss>` / `total = total + <loss>`; how is tensor/item/float/detach."""
        loss_names = self.loss_names()
        if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) and \
                isinstance(small.target, cst.Name):
            total, value = small.target.value, small.value
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                and isinstance(small.value, cst.BinaryOperation) and isinstance(small.value.operator, cst.Add):
            total = small.targets[0].target.value
            left, right = small.value.left, small.value.right
            if isinstance(left, cst.Name) and left.value == total:
                value = right
            elif isinstance(right, cst.Name) and right.value == total:
                value = left
            else:
                return None
        else:
            return None
        if total in loss_names or not (names_in(value) & loss_names):
            return None
        how = accumulation_form(value, loss_names)
        if how == "tensor":
            for node in _walk(value):
                b = self.flow.load_binding.get(id(node)) if isinstance(node, cst.Name) else None
                if b is not None and node.value in loss_names and b.no_grad:
                    how = "detach"  # the loss re-evaluated under no_grad carries no graph
        return total, how

    # -- facts -----------------------------------------------------------
    def loss_names(self) -> set[str]:
        """Names that hold the backpropagated loss or a tensor term of it: bound, on the way to the
        loss, from a module's call or from another such name. Left out: what the loss merely reads,
        such as the batch (`x = x.to(device)`), sizes (`n = len(x)`), configuration (`args`) and
        replay buffers, which carry no graph."""
        if not hasattr(self, "_loss_names"):
            names: set[str] = set()
            for stmt, value in reversed(loss_expressions(self.tl)):
                if not isinstance(stmt, cst.Assign) or _scalar_value(value):
                    continue
                if not (self._calls_a_module(value) or _graph_reaches(value, names)):
                    continue
                for t in stmt.targets:
                    if isinstance(t.target, cst.Name) and not self._not_a_tensor(t.target.value):
                        names.add(t.target.value)
            loss = self.tl.loss
            if isinstance(loss, cst.Name):
                names.add(loss.value)
            self._loss_names = names
        return self._loss_names

    def _calls_a_module(self, value) -> bool:
        for call in _calls_in(value):
            if is_model_call(call, self.flow):
                return True
            name = dotted(call.func)
            if name is not None and any(b.kind is Kind.MODULE for b in self.flow.bindings if b.name == name):
                return True
        return False

    def _not_a_tensor(self, name: str) -> bool:
        """Bound only to modules, optimizers and the like (`actor` in `actor(obs)`): the loss reads
        them, but they are not terms of it."""
        kinds = {b.kind for b in self.flow.bindings if b.name == name}
        return bool(kinds) and kinds <= {Kind.MODULE, Kind.OPTIMIZER, Kind.SCHEDULER, Kind.SCALER}

    def watched_names(self) -> set[str]:
        """Names whose passing to an unknown call may hide a zero_grad/unscale/clip/step."""
        if not hasattr(self, "_watched"):
            names = set()
            for e in self.events:
                if e.op in ("step", "zero_grad", "update", "unscale") and e.recv:
                    r = _root_name_text(e.recv)
                    if r:
                        names.add(r)
                if e.op == "step" and e.info.get("scaled"):
                    r = _root_name_text(e.info["scaled"])
                    if r:
                        names.add(r)
                if e.op == "forward" and e.recv:
                    r = _root_name_text(e.recv)
                    if r:
                        names.add(r)
            names.discard("self")
            self._watched = names
        return self._watched

    def bindings(self, recv) -> list[Binding]:
        """Bindings of a receiver: in this scope, else at module level, else `self.x` in the class's methods."""
        name = dotted(recv) if not isinstance(recv, str) else recv
        if name is None:
            return []
        found = [b for b in self.flow.bindings if b.name == name]
        if found:
            return found
        if isinstance(self.scope, cst.FunctionDef):
            if name.startswith("self."):
                cls = self.index.enclosing_class(self.scope)
                if cls is not None:
                    for stmt in cls.body.body:
                        if isinstance(stmt, cst.FunctionDef):
                            found += [b for b in self.index.flow(stmt).bindings if b.name == name]
                return found
            return [b for b in self.index.flow(self.index.module).bindings if b.name == name]
        return []

    def kind_of(self, recv) -> Kind | None:
        kinds = {b.kind for b in self.bindings(recv)}
        return kinds.pop() if len(kinds) == 1 else None

    def is_scheduler(self, recv) -> bool:
        bs = self.bindings(recv)
        bound = [b for b in bs if not b.is_param]
        if bound:
            return all(b.kind is Kind.SCHEDULER for b in bound)
        text = code_of(recv).lower() if not isinstance(recv, str) else recv.lower()
        return "sched" in text and not any(b.kind is Kind.OPTIMIZER for b in bs)

    def is_scaler(self, recv) -> bool:
        bs = self.bindings(recv)
        if any(b.kind is Kind.SCALER for b in bs):
            return True
        text = code_of(recv).lower() if not isinstance(recv, str) else recv.lower()
        return "scaler" in text

    def helper_ops(self, call: cst.Call) -> set[str]:
        """Ops done inside a function of this file called here (one level deep)."""
        fn = None
        func = call.func
        if isinstance(func, cst.Name):
            fn = self.index.functions.get(func.value)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and isinstance(self.scope, cst.FunctionDef):
            cls = self.index.enclosing_class(self.scope)
            if cls is not None:
                for stmt in cls.body.body:
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.attr.value:
                        fn = stmt
        if fn is None or fn is self.scope:
            return set()
        return function_ops(self.index, fn)

    # -- queries for the rules -------------------------------------------
    def step_event(self) -> Event | None:
        """The optimizer step that follows this backward in the iteration."""
        if self.backward is None:
            return None
        for e in self.events:
            if e.op == "step" and e.order > self.backward.order and e.compatible(self.backward):
                return e
        return None

    def between(self, a: Event, b: Event, ops) -> list[Event]:
        """Events of `ops` that run after `a` and before `b` in one pass through the iteration."""
        ops = (ops,) if isinstance(ops, str) else ops
        return [e for e in self.events if e.op in ops and a.order < e.order < b.order
                and e.compatible(a) and e.compatible(b) and not (e.info.get("exits") and not b.info.get("exits"))]

    def optimizers_stepped(self) -> set[str]:
        return {e.recv for e in self.events if e.op == "step" and e.recv}

    def optimizer_binding(self, name: str) -> Binding | None:
        bs = [b for b in self.bindings(name) if b.kind is Kind.OPTIMIZER and isinstance(b.value, cst.Call)]
        return bs[-1] if len(bs) >= 1 and len({code_of(b.value) for b in bs}) == 1 else None

    def forward_anchor(self, block_line: cst.CSTNode) -> cst.CSTNode | None:
        """The statement of `block_line`'s block that holds the first forward call of this iteration."""
        fw = next((e for e in self.events if e.op == "forward" and self.backward is not None
                   and e.order <= self.backward.order and e.compatible(self.backward)), None)
        if fw is None:
            return None
        parent = self.index.parents.get(block_line)
        node = fw.line
        while node is not None and self.index.parents.get(node) is not parent:
            node = self.index.parents.get(node)
        return node

    def index_var(self) -> str | None:
        """`i` in `for i, batch in enumerate(loader)` / `for i in range(n)` (the batch loop)."""
        loop = self.loop
        if not isinstance(loop, cst.For):
            return None
        it, tgt = loop.iter, loop.target
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name):
            if it.func.value == "range" and isinstance(tgt, cst.Name):
                return tgt.value
            if it.func.value == "enumerate" and isinstance(tgt, cst.Tuple) and tgt.elements and \
                    isinstance(tgt.elements[0].value, cst.Name):
                return tgt.elements[0].value.value
        return None


def grad_op_info(call: cst.Call) -> dict | None:
    """An op on gradients or on parameter data as a bare statement (`p.grad.data.clamp(-1, 1)`), in place or not."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    meth = func.attr.value
    inplace = meth in torchapi.INPLACE_METHODS and torchapi.INPLACE_METHODS[meth] is not None
    if not inplace and meth not in OUT_OF_PLACE:
        return None
    chain = _grad_chain(func.value)
    if chain is None:
        return None
    kind, _root = chain
    args, kwargs, ok = [], {}, True
    arg_srcs, kw_srcs = [], {}
    for a in call.args:
        if a.keyword is None:
            arg_srcs.append(code_of(a.value))
        else:
            kw_srcs[a.keyword.value] = code_of(a.value)
        good, v = literal_value(a.value)
        if not good or a.star:
            ok = False
            continue
        if a.keyword is None:
            args.append(v)
        else:
            kwargs[a.keyword.value] = v
    return {"target": "grad" if kind == "grad" else "param", "method": torchapi.INPLACE_METHODS[meth] if inplace else meth,
            "inplace": inplace, "args": args if ok else None, "kwargs": kwargs if ok else None,
            "args_src": ", ".join(arg_srcs + [f"{k}={v}" for k, v in kw_srcs.items()]),
            "arg_srcs": arg_srcs, "kw_srcs": kw_srcs}


_KNOWN_HARMLESS = frozenset({
    "parameters", "named_parameters", "state_dict", "train", "eval", "to", "cuda", "cpu", "param_groups",
    "get_last_lr", "get_lr", "get_scale", "is_enabled", "modules", "children", "named_modules", "buffers",
    "__call__", "forward", "item", "detach", "size", "numel", "scale", "half", "float", "double", "requires_grad_",
    "get_last_lr", "named_children", "extra_repr",
})


def accumulation_form(value: cst.BaseExpression, loss_names: set[str]) -> str:
    """How a loss reaches an accumulator: item/float/detach (no graph) or tensor (keeps the graph)."""
    if isinstance(value, cst.Call):
        f = value.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("item", "tolist"):
            return "item"
        if isinstance(f, cst.Name) and f.value in ("float", "int"):
            return "float"
        if isinstance(f, cst.Attribute) and f.attr.value in ("detach", "cpu", "numpy") and \
                _strips_graph(value):
            return "detach"
    # any loss name reached without .item()/.detach()/float() on the way keeps the graph
    if _graph_reaches(value, loss_names):
        return "tensor"
    return "item"


def _strips_graph(expr) -> bool:
    node = expr
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ("detach", "item", "tolist"):
            return True
        node = node.func.value
    return isinstance(node, cst.Attribute) and node.attr.value == "data"


# Methods and attributes of a tensor that give plain numbers or metadata, never a graph.
_SCALAR_METHODS = frozenset({"item", "detach", "tolist", "numpy", "size", "dim", "numel", "nelement", "ndimension",
                             "element_size", "stride", "data_ptr", "get_device"})
_SCALAR_ATTRIBUTES = frozenset({"data", "shape", "ndim", "dtype", "device", "requires_grad", "is_leaf"})


def _scalar_value(expr) -> bool:
    """`len(x)`, `x.size(0)`, `x.shape[0]`, `loss.item()`, `int(...)`: a plain number."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Name) and f.value in ("len", "int", "float", "round", "bool"):
            return True
        return isinstance(f, cst.Attribute) and f.attr.value in _SCALAR_METHODS - {"detach", "numpy"}
    return isinstance(expr, cst.Attribute) and expr.attr.value in _SCALAR_ATTRIBUTES - {"data"}


def _graph_reaches(expr, loss_names: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in loss_names
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Attribute) and f.attr.value in _SCALAR_METHODS:
            return False
        if isinstance(f, cst.Name) and f.value in ("float", "int", "len"):
            return False
        if isinstance(f, cst.Attribute):
            if _graph_reaches(f.value, loss_names):
                return True
        return any(_graph_reaches(a.value, loss_names) for a in expr.args)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in _SCALAR_ATTRIBUTES:
            return False
        return _graph_reaches(expr.value, loss_names)
    if isinstance(expr, cst.BinaryOperation):
        return _graph_reaches(expr.left, loss_names) or _graph_reaches(expr.right, loss_names)
    if isinstance(expr, cst.UnaryOperation):
        return _graph_reaches(expr.expression, loss_names)
    if isinstance(expr, cst.Subscript):
        return _graph_reaches(expr.value, loss_names)
    return False


def function_ops(index, fn: cst.FunctionDef) -> set[str]:
    """zero_grad / unscale / clip / step / backward done directly in `fn`'s body."""
    ops = set()
    for node in _walk(fn.body):
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                if isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" and \
                        isinstance(node.value, cst.Name) and node.value.value == "None":
                    ops.add("zero_grad")
        if kind is not cst.Call:
            continue
        func = node.func
        if isinstance(func, cst.Attribute):
            m = func.attr.value
            if m == "zero_grad" or (m == "zero_" and _grad_chain(func.value) is not None):
                ops.add("zero_grad")
            elif m == "unscale_":
                ops.add("unscale")
            elif m in ("clip_grad_norm_", "clip_grad_value_"):
                ops.add("clip")
            elif m == "backward":
                ops.add("backward")
            elif m == "step":
                ops.add("step")
        q = qualname(func, index.imports)
        if q in CLIP_NORM | CLIP_VALUE:
            ops.add("clip")
        if grad_op_info(node) is not None:
            ops.add("grad_op")
    return ops


# --------------------------------------------------------------------------- schedulers, optimizers


@dataclass
class SchedulerInfo:
    name: str
    ctor: str | None             # qualname
    call: cst.Call | None
    kind: str                    # epoch / batch / plateau / unknown
    why: str                     # why that kind
    optimizer: str | None        # the optimizer it was built on


def scheduler_info(it: Iteration, recv: str) -> SchedulerInfo:
    bs = [b for b in it.bindings(recv) if not b.is_param]
    params = [b for b in it.bindings(recv) if b.is_param]
    if params or not bs:
        return SchedulerInfo(recv, None, None, "unknown", f"`{recv}` is not constructed in this file", None)
    ctors = {b.ctor for b in bs}
    calls = [b.value for b in bs if isinstance(b.value, cst.Call)]
    if len(ctors) != 1 or None in ctors or len(calls) != len(bs):
        return SchedulerInfo(recv, None, None, "unknown", f"`{recv}` is bound to more than one kind of value", None)
    ctor = ctors.pop()
    call = calls[-1]
    if len({code_of(c) for c in calls}) != 1:
        return SchedulerInfo(recv, ctor, None, "unknown", f"`{recv}` is built in more than one way", None)
    short = ctor.rsplit(".", 1)[-1]
    opt_arg = _arg(call, 0, "optimizer")
    opt = code_of(opt_arg) if opt_arg is not None else None
    if not ctor.startswith("torch.optim.lr_scheduler."):
        if ctor.startswith("transformers.") or "schedule" in short:
            return SchedulerInfo(recv, ctor, call, "batch", f"`{short}` is a per-step schedule", opt)
        return SchedulerInfo(recv, ctor, call, "unknown", f"`{short}` is not a torch scheduler", opt)
    if short == "ReduceLROnPlateau":
        return SchedulerInfo(recv, ctor, call, "plateau", "ReduceLROnPlateau steps on a metric", opt)
    if short in BATCH_SCHEDULERS:
        return SchedulerInfo(recv, ctor, call, "batch", f"{short} is built to be stepped per batch", opt)
    if short not in EPOCH_SCHEDULERS:
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short} may be stepped per batch or per epoch", opt)
    kw, pos = PERIOD_ARGS[short]
    period = _arg(call, pos, kw)
    if short == "ExponentialLR":
        v = literal_number(period) if period is not None else None
        if v is None:
            return SchedulerInfo(recv, ctor, call, "unknown", "ExponentialLR's gamma is not a literal", opt)
        if v >= 0.999:
            return SchedulerInfo(recv, ctor, call, "batch", f"ExponentialLR(gamma={v:g}) decays per step", opt)
        return SchedulerInfo(recv, ctor, call, "epoch", f"ExponentialLR(gamma={v:g})", opt)
    if period is None:
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short} has no {kw}", opt)
    text = code_of(period)
    unit = _period_unit(it, period)
    if unit == "batch":
        return SchedulerInfo(recv, ctor, call, "batch", f"{short}'s {kw}=`{text}` is counted in iterations", opt)
    if unit == "unknown":
        return SchedulerInfo(recv, ctor, call, "unknown", f"{short}'s {kw}=`{text}` may count epochs or iterations", opt)
    return SchedulerInfo(recv, ctor, call, "epoch", f"{short}({kw}={text})", opt)


def _period_unit(it: Iteration, expr, depth: int = 0) -> str:
    """"epoch", "batch" (counted in iterations) or "unknown" for a scheduler's period argument."""
    text = code_of(expr)
    if _ITERATION_RE.search(text):
        return "batch"
    ok, _v = literal_value(expr)
    if ok or "epoch" in text.lower():
        return "epoch"
    if isinstance(expr, cst.BinaryOperation):
        units = {_period_unit(it, expr.left, depth), _period_unit(it, expr.right, depth)}
        if "batch" in units:
            return "batch"
        return "epoch" if units == {"epoch"} else "unknown"
    if isinstance(expr, (cst.List, cst.Tuple)):
        units = {_period_unit(it, e.value, depth) for e in expr.elements}
        return "batch" if "batch" in units else ("epoch" if units <= {"epoch"} else "unknown")
    if isinstance(expr, cst.Name) and depth < 2:
        values = [b.value for b in it.bindings(expr.value) if not b.is_param and isinstance(b.value, cst.BaseExpression)]
        if values:
            units = {_period_unit(it, v, depth + 1) for v in values}
            return units.pop() if len(units) == 1 else ("batch" if "batch" in units else "unknown")
    return "unknown"


def module_constants(index) -> dict:
    """`NAME = <literal>` at module level (the last one wins), as JSON values."""
    out: dict = {}
    for stmt in index.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name):
                    ok, v = literal_value(small.value)
                    name = small.targets[0].target.value
                    v = _jsonable(v) if ok else _NOT_JSON
                    if v is _NOT_JSON:
                        out.pop(name, None)
                    else:
                        out[name] = v
    return out


def call_spec(call: cst.Call | None, ctor: str | None, skip_first: bool = True, index=None) -> dict | None:
    """A constructor call as JSON the verifier can rebuild: literal arguments as values, the rest as null.
    With `index`, module-level literal constants the other arguments name go along in "env"."""
    if call is None or ctor is None:
        return None
    args, args_src, kwargs = [], [], {}
    positional = [a for a in call.args if a.keyword is None]
    for i, a in enumerate(positional):
        if skip_first and i == 0:
            continue
        ok, v = literal_value(a.value) if not a.star else (False, None)
        v = _jsonable(v) if ok else None
        args.append(None if v is _NOT_JSON else v)
        args_src.append((a.star or "") + code_of(a.value))
    for a in call.args:
        if a.keyword is None:
            continue
        key = a.keyword.value
        if skip_first and key in ("optimizer", "params"):
            continue
        ok, v = literal_value(a.value)
        if ok and _jsonable(v) is not _NOT_JSON:
            kwargs[key] = _jsonable(v)
        else:
            kwargs[key] = None
            kwargs.setdefault("__src__", {})[key] = code_of(a.value)
    spec = {"ctor": ctor, "args": args, "args_src": args_src, "kwargs": kwargs, "source": code_of(call)}
    if index is not None:
        consts = module_constants(index)
        used = set()
        for a in call.args[1 if skip_first else 0:]:
            used |= {n.value for n in _walk(a.value) if isinstance(n, cst.Name)}
        env = {k: consts[k] for k in sorted(used) if k in consts}
        if env:
            spec["env"] = env
    return spec


_NOT_JSON = object()


def _jsonable(v):
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return {"float": repr(v)}
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        out = [_jsonable(x) for x in v]
        return _NOT_JSON if any(x is _NOT_JSON for x in out) else out
    return _NOT_JSON


# --------------------------------------------------------------------------- skeleton (for the verifier)


def _event_json(e: Event, it: Iteration) -> dict:
    d: dict = {"op": e.op}
    if e.op == "backward":
        d["scaled"] = bool(e.info.get("scaled"))
    elif e.op == "step":
        d["scaled"] = bool(e.info.get("scaled"))
    elif e.op == "zero_grad":
        d["target"] = e.info.get("target", "opt")
        d["set_to_none"] = e.info.get("set_to_none")
    elif e.op == "clip":
        d.update(fn=e.info["fn"], value=_jsonable(e.info["value"]) if e.info["value"] is not None else None,
                 value_src=e.info.get("value_src"), norm_type=e.info.get("norm_type"))
    elif e.op == "sched":
        d["args"] = e.info.get("args", False)
    elif e.op == "accumulate":
        d["how"] = e.info["how"]
    elif e.op == "grad_op":
        d.update({k: e.info[k] for k in ("target", "method", "inplace", "args", "kwargs", "args_src", "arg_srcs",
                                         "kw_srcs")})
        d["args"] = _jsonable(d["args"]) if d["args"] is not None else None
        d["kwargs"] = {k: _jsonable(v) for k, v in d["kwargs"].items()} if d["kwargs"] is not None else None
    elif e.op in ("helper", "opaque"):
        d["code"] = e.recv
        d["ops"] = e.info.get("ops", [])
    cond = _cond_json(e, it)
    if cond is not None:
        d["cond"] = cond
    if e.nested:
        d["nested"] = [code_of(n.iter) if isinstance(n, cst.For) else "while" for n in e.nested]
    return d


def _cond_json(e: Event, it: Iteration) -> dict | None:
    if not e.path:
        return None
    conds = []
    for node, branch in e.path:
        if isinstance(node, cst.If) and branch == 0:
            every = _every(node.test, it.index_var())
            conds.append(every if every is not None else {"opaque": code_of(node.test)})
        else:
            conds.append({"opaque": "else" if isinstance(node, cst.If) else "except"})
    if len(conds) == 1:
        return conds[0]
    return {"all": conds}


def _every(test, idx: str | None) -> dict | None:
    """`(i + 1) % k == 0` / `i % k == 0` / `not (i + 1) % k` on the batch index: {"every": k, "offset": c}."""
    if idx is None:
        return None
    mod = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.Equal) and literal_number(test.comparisons[0].comparator) == 0:
        mod = test.left
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        mod = test.expression
    if not (isinstance(mod, cst.BinaryOperation) and isinstance(mod.operator, cst.Modulo)):
        return None
    left = mod.left
    offset = 0
    if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Add) and \
            isinstance(left.left, cst.Name) and literal_number(left.right) is not None:
        offset = int(literal_number(left.right))
        left = left.left
    if not (isinstance(left, cst.Name) and left.value == idx):
        return None
    k = literal_number(mod.right)
    return {"every": int(k) if k is not None else None, "offset": offset, "every_src": code_of(mod.right)}


def skeleton(it: Iteration) -> dict:
    """The iteration as JSON events: what the verifier's train-loop check renders.

    Only events that run with this backward are kept; for an `if` that does not hold the
    backward, the events of its first branch are kept (the condition is assumed true).
    """
    b = it.backward
    keep: list[Event] = []
    for e in it.events:
        if e.op == "inner":
            continue
        if b is not None and not e.compatible(b):
            continue
        if any(br != 0 for n, br in e.path if not any(n is m for m, _ in (b.path if b else ()))):
            continue
        if e.info.get("exits") and not (b is not None and b.info.get("exits")):
            continue  # a branch that skips the rest of the iteration is taken as not taken
        keep.append(e)
    epoch_start = [e for e in it.epoch_events if e.info.get("where") == "start" and e.op in ("sched", "zero_grad", "step")
                   and not e.nested]
    epoch_end = [e for e in it.epoch_events if e.info.get("where") == "end" and e.op in ("sched", "zero_grad", "step")
                 and not e.nested]
    return {
        "batch": [_event_json(e, it) for e in keep],
        "epoch_start": [_event_json(e, it) for e in epoch_start],
        "epoch_end": [_event_json(e, it) for e in epoch_end],
        "epoch_loop": it.epoch_loop is not None,
        "loop": it.loop is not None,
    }


# --------------------------------------------------------------------------- access


def iterations(index) -> list[Iteration]:
    """Every training iteration of the file (computed once per FileIndex)."""
    return index.memo("iterations", lambda: _iterations(index))


def _iterations(index) -> list[Iteration]:
    out: list[Iteration] = []
    ordinals: dict[int, int] = {}  # the loop's place among its scope's training loops
    for scope, flow, tl in training_loops(index):
        ordinal = ordinals.get(id(scope), 0)
        ordinals[id(scope)] = ordinal + 1
        out.append(Iteration(index, scope, flow, tl, ordinal))
    return out


def locate(index, scope: str, ordinal: int) -> Iteration | None:
    for it in iterations(index):
        if it.scope_name == scope and it.ordinal == ordinal:
            return it
    return None


def scope_name(index, scope) -> str:
    if not isinstance(scope, cst.FunctionDef):
        return "<module>"
    parts = [scope.name.value]
    cur = index.parents.get(scope)
    while cur is not None:
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
            parts.append(cur.name.value)
        cur = index.parents.get(cur)
    return ".".join(reversed(parts))


def locator(it: Iteration) -> dict:
    return {"scope": it.scope_name, "ordinal": it.ordinal}


# --------------------------------------------------------------------------- small helpers


def _body(node) -> list:
    """The statements of a block owner; a one-line suite (`for x in y: f(x)`) comes back as itself."""
    if isinstance(node, cst.Module):
        return list(node.body)
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return list(getattr(body, "body", []))


_walk = walk  # pre-order, source order (gradfix.analysis.tree)


def _calls_in(node):
    return [n for n in _walk(node) if type(n) is cst.Call]


def _root_name_text(text: str) -> str | None:
    head = text.split(".")[0].split("[")[0].split("(")[0].strip()
    return head if head.isidentifier() else None


def statement_at(index, line: int) -> tuple[cst.SimpleStatementLine, cst.BaseSmallStatement] | None:
    """The simple statement starting on `line` (1-based)."""
    for node in _walk(index.module):
        if isinstance(node, cst.SimpleStatementLine):
            pos = index.position(node)
            if pos is not None and pos.start.line == line and node.body:
                return node, node.body[0]
    return None


def grad_op_of(small) -> dict | None:
    """The grad/param op of a bare statement (for the verifier's statement mode)."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return grad_op_info(small.value)
    return None
