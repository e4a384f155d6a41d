"""One training iteration as an ordered list of events, branch-aware.

`find_training_loops` (loops.py) says where a backward call sits; this module reads
the whole iteration around it in source order: zero_grad, forward, backward, unscale,
clip, optimizer step, scaler update, scheduler step, loss accumulation and gradient
ops, each with the `if` branches it runs under. Events in exclusive branches
(`if use_amp: ... else: ...`) are never "before" one another, which the scope's
linear Flow cannot tell.

The loop-order rules (GF202-GF210) ask their questions here, and the verifier's
train-loop check (gradfix/verify/checks_loop.py) re-reads both versions of a file
with `skeleton()` (loopspec.py) to render them on a synthetic model. Single expressions
are read in expressions.py, schedulers in schedules.py; the walk that reads the events is
iteration_events.py, the facts and queries the rules ask of them are here. Everything is static;
nothing imports torch.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.tree import contains, walk

from gradfix.analysis.flow import Binding, Flow, Kind
from gradfix.analysis.loops import TrainingLoop, backward_target, is_model_call, training_loops
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.trainstep import loss_expressions, names_in, target_names

from gradfix.analysis.iteration_events import Event, EventWalker, _body, _calls_in, _root_name_text
from gradfix.analysis.expressions import _graph_reaches, _scalar_value, code_of, function_ops

SCALER_CTORS = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler",
                          "torch.amp.grad_scaler.GradScaler", "torch.cpu.amp.GradScaler"})


# --------------------------------------------------------------------------- the iteration


class Iteration(EventWalker):
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
            for node in walk(self.loop.body):
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

    # -- facts -----------------------------------------------------------
    def loss_names(self) -> set[str]:
        """Names that hold the backpropagated loss or a tensor term of it: bound, on the way to the
        loss, from a module's call or from another such name. Left out: what the loss merely reads,
        such as the batch (`x = x.to(device)`), sizes (`n = len(x)`), configuration (`args`) and
        replay buffers, which carry no graph."""
        if not hasattr(self, "_loss_names"):
            names: set[str] = set()
            read_by_loss = names_in(self.tl.loss)
            for _stmt, value in loss_expressions(self.tl):
                read_by_loss |= names_in(value)
            for stmt, value in reversed(loss_expressions(self.tl, unpacked=True)):
                if not isinstance(stmt, cst.Assign) or _scalar_value(value) or self._environment_step(value):
                    continue
                module_call = self._calls_a_module(value)
                if not (module_call or _graph_reaches(value, names)):
                    continue
                for t in stmt.targets:
                    # `out, aux = model(x)`: each unpacked output is a term of the loss; from a callable not
                    # shown to be a module (`loss, per_class = criterion(out, y)`, a criterion given as a
                    # parameter) only the outputs the loss reads are: the others may be numbers or arrays
                    unpacked = target_names(t.target)
                    numbers = self._number_outputs(value, t.target)
                    for name in unpacked:
                        if len(unpacked) > 1 and not self._module_called(value) and name not in read_by_loss:
                            continue
                        if name in numbers:
                            continue  # `loss, accs = crit(z, c)` whose forward builds `accs` from `.item()`
                        if not self._not_a_tensor(name):
                            names.add(name)
            loss = self.tl.loss
            if isinstance(loss, cst.Name):
                names.add(loss.value)
            self._loss_names = names
        return self._loss_names

    def _environment_step(self, value) -> bool:
        """`obs, reward, done, info = env.step(action)`: an environment's step (a receiver bound to
        `gym.make(...)` or named like an environment) gives numbers and arrays, not a graph, whatever
        action tensor it is handed."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
                value.func.attr.value in ("step", "reset")):
            return False
        recv = value.func.value
        ctors = {b.ctor or "" for b in self.bindings(recv)}
        name = (dotted(recv) or "").split(".")[-1].lower()
        if any(c.split(".")[0] in ("gym", "gymnasium") for c in ctors):
            return True
        if any(b.value is not None and isinstance(b.value, cst.Call) and
               (qualname(b.value.func, self.index.imports) or "").split(".")[0] in ("gym", "gymnasium")
               for b in self.bindings(recv)):
            return True
        return name in ("env", "envs", "environment") or name.endswith("_env") or name.startswith("env_")

    def _module_called(self, value) -> bool:
        """`value` itself is a module's call (`model(x)`, not `criterion(model(x), y)`)."""
        if not isinstance(value, cst.Call):
            return False
        if is_model_call(value, self.flow):
            return True
        name = dotted(value.func)
        return name is not None and any(b.kind is Kind.MODULE for b in self.flow.bindings if b.name == name)

    def _calls_a_module(self, value) -> bool:
        for call in _calls_in(value):
            if is_model_call(call, self.flow):
                return True
            name = dotted(call.func)
            if name is not None and any(b.kind is Kind.MODULE for b in self.flow.bindings if b.name == name):
                return True
        return False

    def _number_outputs(self, value, target) -> set[str]:
        """The names of `a, b = module(x)` that the module class's forward returns as Python numbers or lists
        of them on every return (analysis/returns.py: `accs.append(acc.item())`): they hold no graph."""
        if not (isinstance(value, cst.Call) and isinstance(target, (cst.Tuple, cst.List))) or \
                any(isinstance(e, cst.StarredElement) for e in target.elements):
            return set()
        ctors = {b.ctor or (self.index.ctor_of(b.value) if isinstance(b.value, cst.BaseExpression) else None)
                 for b in self.bindings(value.func) if b.kind is Kind.MODULE} if dotted(value.func) else set()
        if len(ctors) != 1 or None in ctors:
            return set()
        positions = self.index.forward_numbers(ctors.pop())
        return {e.value.value for k, e in enumerate(target.elements) if k in positions and isinstance(e.value, cst.Name)}

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
        return self.flow.visible_bindings(name) if name is not None else []

    def kind_of(self, recv) -> Kind | None:
        kinds = {b.kind for b in self.bindings(recv)}
        return kinds.pop() if len(kinds) == 1 else None

    def is_scheduler(self, recv) -> bool:
        bs = self.bindings(recv)
        bound = [b for b in bs if not b.is_param]
        text = code_of(recv).lower() if not isinstance(recv, str) else recv.lower()
        if bound:
            if all(b.kind is Kind.SCHEDULER for b in bound):
                return True
            # built by a function gradfix cannot see (a project's `get_scheduler(optimizer, cfg)`): a `*sched*`
            # name every construction of which is handed an optimizer of the file
            return "sched" in text and all(b.kind is Kind.UNKNOWN and isinstance(b.value, cst.Call)
                                           and self._given_optimizer(b.value) for b in bound)
        return "sched" in text and not any(b.kind is Kind.OPTIMIZER for b in bs)

    def _given_optimizer(self, call: cst.Call) -> bool:
        """Whether an argument of `call` is a name of an optimizer: bound to one, or named like one
        and bound to nothing known to be another kind (`optimizer = optimizer_cls(params)`), as the
        loops' optimizer steps are told (analysis/loops.py)."""
        for a in call.args:
            if isinstance(a.value, cst.Name) and not a.star:
                kinds = {b.kind for b in self.flow.visible_bindings(a.value.value)}
                if Kind.OPTIMIZER in kinds or ("opt" in a.value.value.lower() and kinds and kinds <= {Kind.UNKNOWN}):
                    return True
        return False

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
            fn = self.index.method(cls, func.attr.value)
            if fn is None and cls is not None:
                return inherited_ops(self.index, cls, func.attr.value)
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

def inherited_ops(index, cls: cst.ClassDef, name: str, depth: int = 0) -> set[str]:
    """The ops of method `name` that `cls` inherits: from a base class of this file (its own ops), or a
    project class of another file that clears gradients in it (`class WATrainer(Trainer)` calling
    `self.standard_loss(x, y)`, which `core/utils/train.py` defines with `self.optimizer.zero_grad()`)."""
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and base.value.value in index.classes and depth < 4:
            own = index.classes[base.value.value]
            fn = index.method(own, name)
            found = function_ops(index, fn) if fn is not None else inherited_ops(index, own, name, depth + 1)
        else:
            q = qualname(base.value, index.imports)
            found = {"zero_grad"} if q and index.project is not None and index.project.method_clears(q, name) \
                else set()
        if found:
            return found
    return set()




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
