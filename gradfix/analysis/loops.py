"""Training steps: where the forward pass, `backward()` and `optimizer.step()` sit.

A training step is found in any scope (module body or function) as the
statements around a backward call: `loss.backward()`,
`scaler.scale(loss).backward()`, `accelerator.backward(loss)` or
`torch.autograd.backward(loss)`. Statements are ordered by the scope's Flow.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradfix.analysis.flow import TENSORISH, Flow, Kind, Step
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.summary import autograd_or_module_base
from gradfix.analysis.tree import children, walk

MODEL_NAMES = frozenset({"model", "net", "network", "module", "generator", "discriminator", "critic", "encoder",
                         "decoder", "classifier", "backbone", "student", "teacher"})


@dataclass(eq=False)
class TrainingLoop:
    flow: Flow
    backward: Step                 # the step holding the backward call
    backward_call: cst.Call
    loss: cst.BaseExpression       # what is backpropagated (inside scale(...) when scaled)
    loss_holder: cst.CSTNode       # the node that directly holds `loss` (for rewrites)
    loop: cst.CSTNode | None       # innermost For/While around backward, None for a straight-line step
    steps: list[Step]              # the loop body's steps (the scope's steps when loop is None)
    forward: Step | None           # first model call before backward in the same iteration
    opt_step: Step | None          # first optimizer.step()/scaler.step(opt) after backward
    after_step_line: cst.CSTNode | None  # the statement line after which post-step code goes

    def between_forward_and_backward(self) -> list[Step]:
        if self.forward is None:
            return []
        return [s for s in self.steps if self.forward.index <= s.index < self.backward.index]

    def before_backward(self) -> list[Step]:
        return [s for s in self.steps if s.index < self.backward.index]


def backward_target(call: cst.Call, flow: Flow) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
    """For a backward call, the expression backpropagated and the node holding it."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        recv = func.value
        if hand_written_backward(flow.index) and not _shown_tensor(recv, flow):
            return None  # `model.backward(dout)` of a NumPy-from-scratch course: not autograd's backward
        if _called_in_scope(recv, flow):
            return None  # `loss = self.loss_fn(out, y); self.loss_fn.backward()`: a callable op object, not a tensor
        if not call.args or call.args[0].keyword is not None:
            # loss.backward() / scaler.scale(loss).backward()
            if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and recv.func.attr.value == "scale" \
                    and recv.args:
                return recv.args[0].value, recv.args[0]
            if isinstance(recv, cst.Name) and flow.env.get(recv.value) is not None and \
                    flow.env[recv.value].kind in (Kind.OTHER,):
                return None
            return recv, call.func
        # accelerator.backward(loss) / torch.autograd.backward(loss)
        q = qualname(func, flow.index.imports) or ""
        bound = flow.env.get(recv.value) if isinstance(recv, cst.Name) else None
        if q != "torch.autograd.backward" and bound is not None and bound.kind in TENSORISH:
            # `y.backward(grad)`: the positional argument is Tensor.backward's `gradient`, not a loss
            return recv, call.func
        if q == "torch.autograd.backward" or isinstance(recv, cst.Name):
            return call.args[0].value, call.args[0]
    return None


def _called_in_scope(recv: cst.BaseExpression, flow: Flow) -> bool:
    """`recv` (a name or attribute chain) is also called in the scope, `self.loss_fn(logits, y)`: tensors are not
    callable, so its `.backward()` is a method of a hand-written op (a course's loss class), not autograd's."""
    name = dotted(recv)
    if name is None:
        return False
    called = getattr(flow, "_called_names", None)
    if called is None:
        called = {d for n in walk(flow.scope) if type(n) is cst.Call and (d := dotted(n.func)) is not None}
        flow._called_names = called
    return name in called


def hand_written_backward(index) -> bool:
    """The file defines, or imports from the project, a class with its own `backward` method that is not a
    `torch.autograd.Function` (a NumPy layer, a from-scratch model, a loss object with hand-written gradients).
    There `x.backward(...)` may be that method, so only a receiver shown to be a tensor is autograd's."""
    def compute() -> bool:
        for cls in index.classes.values():
            if not _autograd_function(cls, index) and any(
                    isinstance(st, cst.FunctionDef) and st.name.value == "backward" and not _calls_backward(st)
                    for st in (cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ())):
                return True
        project = index.project
        return project is not None and any(project.hand_written_backward(q) for q in
                                           {*index.imports.aliases.values(), *project.star_imports()})
    return index.memo("loops.hand_written_backward", compute)


def _calls_backward(fn: cst.FunctionDef) -> bool:
    """A trainer's `def backward(self, loss): loss.backward()` (or `torch.autograd.backward(...)`) wraps autograd:
    not hand-written gradient code. A method that binds what an inner `backward` returns (`dout =
    layer.backward(dout)` over a from-scratch model's layers) chains hand-written gradients instead: autograd's
    `backward()` returns None, so no wrapper uses its result."""
    calls = [c for c in _walk_calls(fn) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"]
    if not calls:
        return False
    bound = {id(node.value) for node in _walk_nodes(fn) if isinstance(node, (cst.Assign, cst.AugAssign))}
    return not any(id(c) in bound for c in calls)


def _walk_nodes(node):
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(cur.children)


def _autograd_function(cls: cst.ClassDef, index) -> bool:
    return any(autograd_or_module_base(qualname(base.value, index.imports) or "") for base in cls.bases)


def _shown_tensor(recv, flow: Flow) -> bool:
    """The receiver of `.backward()` is a value, not an object a hand-written class may have built:
    `loss` bound to a tensor or to a call's result (`loss = criterion(out, y)`), `(a + b)`,
    `criterion(out, y).backward()`, `scaler.scale(loss)`, `torch.autograd.backward(...)`. A function
    parameter, a global, an attribute (`self.net`) or a name bound to a class's construction is not."""
    if isinstance(recv, cst.Name):
        b = flow.env.get(recv.value)
        if b is None:
            return False
        if b.kind in TENSORISH:
            return True
        if b.step < 0 or not isinstance(b.value, cst.Call):
            return False
        head = b.value.func
        last = head.attr.value if isinstance(head, cst.Attribute) else head.value if isinstance(head, cst.Name) else ""
        # a class of this file is an object whatever its spelling (`mlp = multiClassModel()`)
        return not last[:1].isupper() and b.kind is not Kind.OTHER and not (
            isinstance(head, cst.Name) and head.value in flow.index.classes)
    if isinstance(recv, cst.Attribute):
        return qualname(recv, flow.index.imports) == "torch.autograd"
    return isinstance(recv, (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))


def calls_backward(st: Step, flow: Flow) -> bool:
    """A simple statement that runs a backward() (`loss.backward()`, `scaler.scale(loss).backward()`)."""
    return not isinstance(st.node, cst.BaseCompoundStatement) and \
        any(backward_target(c, flow) is not None for c in _walk_calls(st.node))


def _walk_calls(node):
    stack = [node]
    while stack:
        cur = stack.pop()
        kind = type(cur)
        if kind is cst.Lambda:
            continue
        if kind is cst.Call:
            yield cur
        stack.extend(children(cur))


def is_model_call(call: cst.Call, flow: Flow) -> bool:
    func = call.func
    if isinstance(func, cst.Name):
        # the final env is the end of the scope; look at every binding of that name
        for bd in flow.bindings:
            if bd.name == func.value and bd.kind is Kind.MODULE:
                return not (bd.ctor or "").endswith("Loss")  # nn.MSELoss() is a criterion, not the model
        if func.value.lower() in MODEL_NAMES:
            return True
        return False
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return func.attr.value.lower() in MODEL_NAMES
    return False


def _is_optimizer_step(call: cst.Call, flow: Flow) -> bool:
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return False
    recv = func.value
    name = flow.index.code(recv).lower()
    kinds = {b.kind for b in flow.bindings if isinstance(recv, cst.Name) and b.name == recv.value}
    if Kind.SCHEDULER in kinds or "sched" in name:
        return False
    if Kind.SCALER in kinds or "scaler" in name:
        return bool(call.args)
    return Kind.OPTIMIZER in kinds or "opt" in name


def training_loops(index):
    """(scope, flow, training loop) for every training loop of the file, scope by scope."""
    if "backward" not in index.text:
        return  # no backward() anywhere: no scope's data flow needs to be asked
    for scope in index.scopes():
        flow = index.flow(scope)
        for tl in find_training_loops(flow):
            yield scope, flow, tl


def find_training_loops(flow: Flow) -> list[TrainingLoop]:
    """The training steps of a scope (computed once per Flow; several rules ask)."""
    cached = getattr(flow, "_training_loops", None)
    if cached is None:
        cached = _find_training_loops(flow)
        flow._training_loops = cached
    return list(cached)


def _find_training_loops(flow: Flow) -> list[TrainingLoop]:
    loops: list[TrainingLoop] = []
    backward_steps = [st for st in flow.steps if any(
        backward_target(c, flow) is not None
        for c in _walk_calls(st.node if not isinstance(st.node, cst.BaseCompoundStatement) else _header(st.node)))]
    for st in backward_steps:
        for call in _walk_calls(st.node if not isinstance(st.node, cst.BaseCompoundStatement) else _header(st.node)):
            target = backward_target(call, flow)
            if target is None:
                continue
            loss, holder = target
            loop = st.loops[-1] if st.loops else None
            if loop is not None:
                body = [s for s in flow.steps if loop in s.loops]
            else:
                body = list(flow.steps)
            # a nested loop with its own backward (a GAN's critic loop) is another training step
            depth = len(st.loops)
            other = {s.loops[depth] for s in backward_steps
                     if s is not st and len(s.loops) > depth and s.loops[:depth] == st.loops}
            body = [s for s in body if not (len(s.loops) > depth and s.loops[depth] in other)]
            forward = None
            for s in body:
                if s.index >= st.index:
                    break
                node = s.node if not isinstance(s.node, cst.BaseCompoundStatement) else _header(s.node)
                if any(is_model_call(c, flow) for c in _walk_calls(node)):
                    forward = s
                    break
            opt_step = None
            after_line = None
            for s in body:
                if s.index < st.index:
                    continue
                node = s.node if not isinstance(s.node, cst.BaseCompoundStatement) else None
                if node is not None and any(_is_optimizer_step(c, flow) for c in _walk_calls(node)):
                    opt_step = s
                    after_line = s.line
                    break
            if opt_step is not None:
                # under AMP, `scaler.update()` follows the step; post-step code goes after it
                for s in body:
                    if s.index <= opt_step.index or isinstance(s.node, cst.BaseCompoundStatement):
                        continue
                    calls = list(_walk_calls(s.node))
                    if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "update" and
                           "scaler" in flow.index.code(c.func.value).lower() for c in calls):
                        if _same_block(flow, s.line, opt_step.line):
                            after_line = s.line
                        break
                    if s.line is not opt_step.line:
                        break
            loops.append(TrainingLoop(flow, st, call, loss, holder, loop, body, forward, opt_step, after_line))
    return loops


def _header(node: cst.BaseCompoundStatement) -> cst.CSTNode:
    for attr in ("test", "iter"):
        if hasattr(node, attr):
            return getattr(node, attr)
    if isinstance(node, cst.With):
        return cst.Tuple([cst.Element(i.item) for i in node.items])
    return cst.Name("None")


def _same_block(flow: Flow, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return flow.index.parents.get(a) is flow.index.parents.get(b)


is_optimizer_step = _is_optimizer_step
