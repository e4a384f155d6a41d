"""Which values of a training step carry gradient from the modules being trained (GF307); the
probabilities of GF308 are in analysis/probabilities.py.

"Trained" modules are those whose `.parameters()` are given to the optimizer that steps after
this backward (`opt = Adam(model.parameters())`); when that construction is not in view, the
step's model calls that are not named like a frozen copy (target, teacher, ema, ...). A value
carries gradient when it is computed from a trained module's call (or a name bound to one)
through anything but a break: `.detach()`, `.item()`, `.numpy()`, `.tolist()`, `torch.tensor(...)`,
`float(...)`. So a target network, a teacher or a GAN generator in the discriminator step never
carries, and their `.detach()` is never a finding.
"""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.flow import Flow, Kind
from gradfix.analysis.forward_cuts import forward_cuts, literal_key
from gradfix.analysis.module_ctors import module_ctor_of
from gradfix.analysis.loops import TrainingLoop, calls_backward, is_model_call, is_optimizer_step
from gradfix.analysis.names import dotted, qualname, target_names
from gradfix.analysis.trainstep import loss_expressions, optimizer_names
from gradfix.analysis.tree import calls_in, children, contains, walk

BREAK_METHODS = frozenset({"detach", "item", "numpy", "tolist"})
BREAK_FUNCS = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "numpy.array", "numpy.asarray",
                         "float", "int"})
FROZEN_NAMES = re.compile(r"(target|teacher|ema|momentum|frozen|old|ref|pretrained|prior|fixed)", re.I)


# methods of a module whose results carry no gradient from its parameters
_BOOKKEEPING = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
                          "children", "named_children", "state_dict", "load_state_dict", "zero_grad", "train", "eval",
                          "to", "cpu", "cuda", "half", "float", "double", "apply", "requires_grad_", "extra_repr",
                          "register_buffer", "register_parameter", "register_forward_hook", "register_forward_pre_hook",
                          "register_full_backward_hook", "add_module"})


def _assigned_attribute(cls: cst.ClassDef, name: str) -> bool:
    """`self.<name> = ...` somewhere in the class: an attribute holding its own object, not a method."""
    for node in walk(cls):
        if type(node) is cst.Assign:
            for t in node.targets:
                tgt = t.target
                if type(tgt) is cst.Attribute and type(tgt.value) is cst.Name and tgt.value.value == "self" and \
                        tgt.attr.value == name:
                    return True
    return False


def is_break(call: cst.Call, imports) -> cst.BaseExpression | None:
    """The expression a break call cuts from autograd (its receiver or first argument), else None."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in BREAK_METHODS and not call.args:
        return func.value
    q = qualname(func, imports)
    if q in BREAK_FUNCS and call.args and call.args[0].keyword is None:
        return call.args[0].value
    return None


def _excludes(branch: tuple, other: tuple) -> bool:
    """Whether a step in `branch` and one in `other` lie in different branches of one if/elif chain."""
    chains = dict(other)
    return any(chain in chains and chains[chain] != k for chain, k in branch)


def _collected(call) -> tuple[str, list] | None:
    """(`values`, the items) for `values.append(v)` / `.extend(vs)` / `.insert(i, v)` on a local name."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
            isinstance(call.func.value, cst.Name) and call.func.attr.value in ("append", "extend", "insert")):
        return None
    args = list(call.args[1:] if call.func.attr.value == "insert" else call.args)
    return call.func.value.value, args


class GradPaths:
    """Gradient-carrying names of one training step (up to its backward call)."""

    def __init__(self, tl: TrainingLoop, data_breaks: bool = False, trained: set[str] | None = None):
        """`trained`: ask about these modules instead of the ones the step's optimizer holds."""
        self.tl = tl
        self.data_breaks = data_breaks  # treat `x.data` as a cut too (GF104 asks what a term keeps without it)
        self.flow: Flow = tl.flow
        self.index = self.flow.index
        self.imports = self.index.imports
        self.trained, self.trained_from = (set(trained), "given") if trained is not None else self._trained()
        # id(model call or `out["key"]` of the step) -> the cut in the model's forward that empties it
        self.members: set[str] = self._members()
        self.forward_cuts: dict[int, tuple[cst.CSTNode, str, str]] = self._forward_cuts()
        self.preds: set[str] = set()
        carried_in: dict[str, tuple] = {}  # name -> the branch of the binding that made it carry
        for st in self.flow.steps[: tl.backward.index]:
            node = st.node
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                carries = not st.no_grad and self.carries(node.value)
                for t in targets:
                    for name in target_names(t):
                        if carries:
                            self.preds.add(name)
                            carried_in[name] = st.branch
                        elif not _excludes(st.branch, carried_in.get(name, ())):
                            # a binding in a sibling branch (`if ...: q_loss = -q1.mean() else: q_loss =
                            # -r_fun(a).mean()`) runs instead of the carrying one, not after it: may carry
                            self.preds.discard(name)
            elif isinstance(node, cst.AugAssign):
                for name in target_names(node.target):
                    if not st.no_grad and self.carries(node.value):
                        self.preds.add(name)
            elif isinstance(node, cst.Expr) and not st.no_grad:
                # `values.append(value)` in a rollout: the list holds the step's outputs (read later as
                # `values[i]`), so it carries what its items carry
                held = _collected(node.value)
                if held is not None and any(self.carries(a.value) for a in held[1]):
                    self.preds.add(held[0])

    # -- trained modules ---------------------------------------------------
    def _trained(self) -> tuple[set[str], str]:
        opts = optimizer_names(self.tl)
        if opts:
            # every optimizer this backward's update steps: `opt1.step(); opt2.step()` after one backward
            # trains both models (cross pseudo supervision), so a term live through either is trained
            found: set[str] = set()
            shown = []
            for opt in opts:
                owners: set[str] = set()
                for flow in (self.flow, self.index.flow(self.index.module)):
                    for b in flow.bindings:
                        if b.name == opt and b.kind is Kind.OPTIMIZER and isinstance(b.value, cst.Call):
                            owners |= self._param_owners(flow, b.value)
                if owners:
                    found |= owners
                    shown.append(f"`{opt}`")
                elif opt == opts[0]:
                    break  # the first optimizer's modules are not shown: fall back to the step's model calls
                else:  # a later one's are not shown: it may train any model the step calls
                    found |= self._model_calls(self._segment())
            if found:
                return found, f"the modules {' and '.join(shown)} {'optimizes' if len(shown) == 1 else 'optimize'}"
        held = self._attribute_optimizer()
        if held:
            return held[1], f"the modules `{held[0]}` optimizes"
        return self._model_calls(self._segment()), "the model called in this step"

    def _attribute_optimizer(self) -> tuple[str, set[str]] | None:
        """`self.actor_optimizer.step()` after this backward, the optimizer built in another method of the
        class (`Adam(self.actor.parameters())` in `__init__`): the modules it holds. An actor step that also
        calls the critic (`q = self.critic(s, self.actor(s))`) trains the actor, not the critic."""
        for call, recv in step_calls(self.tl):
            if recv and recv.startswith("self.") and is_optimizer_step(call, self.flow):
                owners = self.modules_optimized_by(recv)
                # `AdamW(model.parameters())` in `__init__` names that method's local, not this one's
                ok = owners and all(o.startswith("self.") for o in owners)
                return (recv, owners) if ok else None
        return None

    def _segment(self) -> list:
        """The simple statements of this backward's segment: a critic updated by an earlier backward() of
        the same iteration (an actor-critic step) is not what this one trains."""
        steps = [st for st in self.tl.before_backward() if not isinstance(st.node, cst.BaseCompoundStatement)]
        earlier = [i for i, st in enumerate(steps) if calls_backward(st, self.flow)]
        return steps[earlier[-1] + 1:] if earlier else steps

    def step_modules(self) -> set[str]:
        """Every module this step may run with gradient: the trained ones, the step's model calls
        and anything whose `.parameters()` the file reads (`Adam(self.actor.parameters())` in
        `__init__`), but for those named like a frozen copy (target, teacher, ema, ...)."""
        names = set(self.trained) | {n for n in parameter_owners(self.index)
                                     if not FROZEN_NAMES.search(n.rsplit(".", 1)[-1])}
        simple = [st for st in self.tl.before_backward() if not isinstance(st.node, cst.BaseCompoundStatement)]
        return names | self._model_calls(simple)

    def _model_calls(self, steps) -> set[str]:
        """The models called with grad on in `steps`, but for those named like a frozen copy."""
        names = set()
        for st in steps:
            if st.no_grad:
                continue
            for call in calls_in(st.node):
                if is_model_call(call, self.flow):
                    name = dotted(call.func)
                    if name and not FROZEN_NAMES.search(name.rsplit(".", 1)[-1]):
                        names.add(name)
        return names

    def modules_optimized_by(self, opt: str) -> set[str]:
        """The modules whose `.parameters()` the optimizer `opt` (`opt`, `self.optimizer`) is built from,
        wherever the scope can see its construction (for `self.x`, any method of the class)."""
        found: set[str] = set()
        for b in self.flow.visible_bindings(opt):
            if b.kind is Kind.OPTIMIZER and isinstance(b.value, cst.Call):
                found |= self._param_owners(self.flow, b.value)
        return found

    def _param_owners(self, flow: Flow, ctor: cst.Call, depth: int = 0) -> set[str]:
        out: set[str] = set()
        for call in calls_in(ctor):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
                name = dotted(call.func.value)
                if name:
                    out.add(name)
        if not out and depth < 2 and isinstance(ctor, cst.Call):  # `opt = Adam(params)`, `params = list(...)`
            for arg in ctor.args:  # (a keyword bound to a literal, `lr=lr0` with `lr0 = 6`, has none)
                if isinstance(arg.value, cst.Name):
                    for b in flow.bindings:
                        if b.name == arg.value.value and isinstance(b.value, cst.BaseExpression):
                            out |= self._param_owners(flow, b.value, depth + 1)  # type: ignore[arg-type]
        return out

    def _forward_cuts(self) -> dict[int, tuple[cst.CSTNode, str, str]]:
        """Model calls of this step whose whole output, and subscripts `out["weight"]` / `out[1]` of
        them, that the model class's forward cuts from autograd before returning (`forward_cuts`)."""
        found: dict[int, tuple[cst.CSTNode, str, str]] = {}
        flow, index = self.flow, self.index
        if not any(forward_cuts(index, c) for c in index.module_classes):
            return found
        cuts_of: dict[int, dict] = {}
        for st in flow.steps[: self.tl.backward.index]:
            if isinstance(st.node, cst.BaseCompoundStatement):
                continue
            for call in calls_in(st.node):
                if not self.calls_trained(call):
                    continue
                ctor = module_ctor_of(index, flow, call.func)
                cuts = forward_cuts(index, ctor) if ctor in index.module_classes else {}
                if cuts:
                    cuts_of[id(call)] = cuts
                    if None in cuts:
                        found[id(call)] = cuts[None] + (ctor,)
            for node in walk(st.node):
                if type(node) is not cst.Subscript or len(node.slice) != 1 or \
                        not isinstance(node.slice[0].slice, cst.Index):
                    continue
                key = literal_key(node.slice[0].slice.value)
                base = node.value
                if isinstance(base, cst.Name):
                    b = flow.name_binding(base)
                    base = b.value if b is not None and b.step >= 0 else None
                cuts = cuts_of.get(id(base), {}) if isinstance(base, cst.Call) else {}
                if key is not None and key in cuts:
                    found[id(node)] = cuts[key] + (module_ctor_of(index, flow, base.func),)
        return found

    def calls_trained(self, call: cst.Call) -> bool:
        name = dotted(call.func)
        if name is None:
            return False
        if name.endswith(".forward"):
            name = name[: -len(".forward")]
        if name in self.trained or name in self.members:
            return True
        # a method of a trained module, `self.critic.q_min(obs, act)`: it computes from the module's parameters
        # (not the bookkeeping methods, whose results carry no graph)
        owner, _, meth = name.rpartition(".")
        if owner.endswith(".module"):
            owner = owner[: -len(".module")]  # `net.module.run_discriminator(x)`: the model a DataParallel wraps
        if bool(owner) and (owner in self.trained or owner in self.members) and meth not in _BOOKKEEPING:
            return True
        # a method of the model that holds a trained part, `vae.decode(z)` with `vae.decoder` trained: it carries
        # when the method of the model's class (in this file) reads that part, `self.decoder(z)`
        return self._method_reads_trained_part(call, name) is True

    def _trained_parts(self, owner: str) -> set[str]:
        """The first attribute of each trained module held by `owner` (`vae.decoder.net` -> `decoder`)."""
        return {t[len(owner) + 1:].split(".", 1)[0] for t in self.trained if t.startswith(owner + ".")}

    def may_run_trained(self, call: cst.Call) -> bool:
        """A call of a method of an object that holds a trained module (`vae.decode(z)`, `vae.decoder`
        trained), whose body this file does not show to leave that module alone: it may run it."""
        name = dotted(call.func)
        return name is not None and self._method_reads_trained_part(call, name) is not False

    def _method_reads_trained_part(self, call: cst.Call, name: str) -> bool | None:
        """For `owner.meth(...)` where `owner` holds a trained module: True when the method of owner's class
        (a class of this file) reads `self.<part>` of a trained part, directly or through another method of
        the class it calls on `self` (two levels); False when it shows it does not, or `owner` holds no
        trained module, or `meth` is bookkeeping; None when the class or the method is not in this file."""
        owner, _, meth = name.rpartition(".")
        if not owner or meth in _BOOKKEEPING or not isinstance(call.func, cst.Attribute):
            return False
        parts = self._trained_parts(owner)
        if not parts:
            return False
        if meth in parts:
            return None  # the module holding the trained one, called: what its forward runs is not read here
        if type(call.func.value) is cst.Name and call.func.value.value == "self":
            cls = self.index.enclosing_class(call)  # `self.critic_net(s, a)` in a learner holding `self.actor_net`
            cls_name = cls.name.value if cls is not None else None
        else:
            ctor = module_ctor_of(self.index, self.flow, call.func.value)
            cls_name = ctor.rsplit(".", 1)[-1] if ctor else None
            cls = self.index.classes.get(cls_name) if cls_name else None
        if cls is None:
            return None
        if meth in self.index.submodules.get(cls_name, {}) or _assigned_attribute(cls, meth):
            return False  # another attribute of the holder (`codec.analysis(x)` next to `codec.synthesis`)
        fn = self.index.method(cls, meth)
        if fn is None:
            return None
        todo, seen = [(fn, 0)], {meth}
        while todo:
            body, depth = todo.pop()
            for node in walk(body):
                if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
                    attr = node.attr.value
                    if attr in parts:
                        return True
                    other = self.index.method(cls, attr)
                    if other is not None and attr not in seen and depth < 2:
                        seen.add(attr)
                        todo.append((other, depth + 1))
        return False

    def _members(self) -> set[str]:
        """Names bound only as the loop variable of `for m in <trained>` / `for i, m in enumerate(<trained>)`:
        the members of a trained container (`for layer in layers: x, aux = layer(x)` runs the ModuleList's
        modules, so what they return carries gradient)."""
        if not self.trained:
            return set()
        steps = self.flow.steps
        verdict: dict[str, bool] = {}
        for b in self.flow.bindings:
            node = steps[b.step].node if 0 <= b.step < len(steps) else None
            member = False
            if type(node) is cst.For:
                target, it = node.target, node.iter
                if type(it) is cst.Call and dotted(it.func) == "enumerate" and len(it.args) == 1 and \
                        type(target) is cst.Tuple and len(target.elements) == 2:
                    target, it = target.elements[1].value, it.args[0].value
                member = type(target) is cst.Name and target.value == b.name and dotted(it) in self.trained
            verdict[b.name] = verdict.get(b.name, True) and member
        return {name for name, member in verdict.items() if member and name not in self.trained}

    # -- carrying ----------------------------------------------------------
    def carries(self, expr: cst.CSTNode) -> bool:
        stack = [expr]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is cst.Lambda:
                continue
            if (kind is cst.Call or kind is cst.Subscript) and id(node) in self.forward_cuts:
                continue  # the model's forward returns it cut from autograd
            if kind is cst.Call:
                if is_break(node, self.imports) is not None:
                    continue
                if self.calls_trained(node):
                    return True
            if kind is cst.Name:
                if node.value in self.preds:
                    return True
                continue
            if kind is cst.Attribute:
                if not (self.data_breaks and node.attr.value == "data"):
                    stack.append(node.value)
                continue
            stack.extend(children(node))
        return False

    def dead_term(self, term: cst.BaseExpression) -> bool:
        """An additive term of the loss shown to carry no gradient: it does not carry, and neither it nor a
        value it reads hands a trained module to a call (`gradient_penalty(dis_net, real, fake.detach())`
        in a discriminator step may run `dis_net` inside: its result is not shown to be a constant)."""
        if self.carries(term):
            return False
        for part in self.reaches(term):
            for node in walk(part):
                if type(node) is cst.Call and any(not a.star and dotted(a.value) in self.trained for a in node.args):
                    return False
        return not self.reaches_unknown_method(term)

    def reaches_unknown_method(self, expr: cst.CSTNode) -> bool:
        """`expr`, outside its stop-gradients (and through the values of the step's names it reads there),
        calls a method of an object that holds a trained module and that this file does not show to leave it
        alone (`model.decode(z)` of a class defined elsewhere): whether it carries gradient is unknown."""
        values = self._values()
        stack, seen = [expr], set()
        while stack:
            node = stack.pop()
            if type(node) is cst.Lambda:
                continue
            if type(node) is cst.Call:
                if is_break(node, self.imports) is not None:
                    continue
                if self.may_run_trained(node):
                    return True
            if type(node) is cst.Name and node.value in values and node.value not in seen:
                seen.add(node.value)
                stack.append(values[node.value])
            stack.extend(children(node))
        return False

    def breaks_in(self, expr: cst.CSTNode) -> list[tuple[cst.Call, cst.BaseExpression]]:
        """Break calls inside `expr` whose cut expression carries gradient."""
        out = []
        for node in walk(expr):
            if isinstance(node, cst.Call):
                inner = is_break(node, self.imports)
                if inner is not None and self.carries(inner):
                    out.append((node, inner))
        return out

    # -- the loss ----------------------------------------------------------
    def loss_values(self) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        return loss_expressions(self.tl)

    def _values(self) -> dict[str, cst.BaseExpression]:
        values: dict[str, cst.BaseExpression] = {}
        for stmt, value in self.loss_values():
            if isinstance(stmt, cst.Assign):
                for t in stmt.targets:
                    if isinstance(t.target, cst.Name):
                        values.setdefault(t.target.value, value)
        return values

    def reaches(self, term: cst.BaseExpression) -> list[cst.CSTNode]:
        """`term` and the values of the step's names it reads, transitively (`0.1 * reg` -> reg's value)."""
        values = self._values()
        out: list[cst.CSTNode] = []
        todo: list[cst.CSTNode] = [term]
        seen: set[str] = set()
        while todo:
            expr = todo.pop()
            out.append(expr)
            for node in walk(expr):
                if isinstance(node, cst.Name) and node.value in values and node.value not in seen:
                    seen.add(node.value)
                    todo.append(values[node.value])
        return out

    def weights_live_factor(self, node: cst.CSTNode) -> bool:
        """Whether `node` (a stop-gradient: `values[i].data`, `v.detach()`) reaches the loss as a factor of a
        product whose other factor looks like a live tensor of the step: the GAE advantage weighting the
        log-probabilities (`delta = r + g * values[i + 1].data - values[i].data; gae = gae * g * lam + delta;
        policy_loss - log_probs[i] * gae`). Such a value is a weight, a constant on purpose; the term keeps
        its gradient through the other factor. A factor that is a number, a hyper-parameter (`args.l2`,
        `cfg["l2"]`, a name bound to a number) or itself read through `.data` does not count."""
        for _stmt, value in self.loss_values():
            for op in walk(value):
                if not (type(op) is cst.BinaryOperation and isinstance(op.operator, (cst.Multiply, cst.Divide))):
                    continue
                holds = {id(side): any(contains(part, node) for part in self.reaches(side))
                         for side in (op.left, op.right)}
                for side, other in ((op.left, op.right), (op.right, op.left)):
                    if holds[id(side)] and not holds[id(other)] and self._tensor_like(other):
                        return True
        return False

    def _tensor_like(self, expr: cst.CSTNode) -> bool:
        """`log_probs[i]`, `_log_prob`, `dist.log_prob(a)`, `Variable(gae)` around such: a value that may
        carry gradient, as opposed to a constant factor."""
        if self.carries(expr):
            return True
        for node in walk(expr):
            if type(node) is cst.Attribute and node.attr.value == "data":
                return False
        core = expr
        while isinstance(core, cst.Call) and isinstance(core.func, cst.Attribute) and \
                core.func.attr.value in ("sum", "mean", "squeeze", "unsqueeze", "expand_as", "view", "float"):
            core = core.func.value
        if isinstance(core, cst.Subscript):
            keys = [e.slice.value for e in core.slice if isinstance(e.slice, cst.Index)]
            return not any(isinstance(k, (cst.SimpleString, cst.ConcatenatedString)) for k in keys)
        if isinstance(core, cst.Call):
            return not (isinstance(core.func, cst.Name) and core.func.value in ("float", "int", "len", "abs", "min",
                                                                                "max", "round"))
        if isinstance(core, cst.Name):
            b = self.flow.name_binding(core)
            return b is not None and b.kind in (Kind.TENSOR, Kind.PARAMETER) or \
                (b is not None and isinstance(b.value, cst.Call) and b.kind is not Kind.NUMBER)
        return False

    def additive_terms(self) -> list[cst.BaseExpression]:
        """Terms added into the backpropagated loss, following names bound in this step (`loss = ce + reg`)."""
        # every binding of a name counts: `loss = ce; loss = loss + 1e-3 * reg; loss = loss + l1`
        # adds both penalties, and `reg += p.data.norm()` in a loop adds each of its values
        values: dict[str, list] = {}
        for stmt, value in self.loss_values():
            if isinstance(stmt, cst.Assign):
                for t in stmt.targets:
                    if isinstance(t.target, cst.Name):
                        values.setdefault(t.target.value, []).append(value)
            elif isinstance(stmt, cst.AugAssign) and isinstance(stmt.target, cst.Name):
                values.setdefault(stmt.target.value, []).append(value)
        out: list[cst.BaseExpression] = []
        todo = [self.tl.loss]
        seen: set[str] = set()
        while todo:
            expr = todo.pop()
            for term in _terms(expr):
                if isinstance(term, cst.Name) and term.value in values:
                    if term.value not in seen:
                        seen.add(term.value)
                        todo.extend(values[term.value])
                else:
                    out.append(term)
        return out


def parameter_owners(index) -> set[str]:
    """Dotted names whose `.parameters()` / `.named_parameters()` the file reads anywhere."""
    def compute() -> set[str]:
        out: set[str] = set()
        for call in calls_in(index.module):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                name = dotted(func.value)
                if name:
                    out.add(name)
        return out
    return index.memo("gradpath.parameter_owners", compute)


def _terms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`a + b - c * d` -> [a, b, c * d]; a constant factor is peeled: `0.1 * reg` -> reg."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _terms(expr.left) + _terms(expr.right)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _terms(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        if isinstance(expr.left, (cst.Integer, cst.Float)):
            return _terms(expr.right)
        if isinstance(expr.right, (cst.Integer, cst.Float)):
            return _terms(expr.left)
    return [expr]


def straight_through(call: cst.Call, index) -> bool:
    """`x + (y - x).detach()`, `y_hard - y_soft.detach() + y_soft`: the detached part is cancelled by a
    term outside it in the same sum, so the gradient flows through that term on purpose."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "detach"):
        return False
    top: cst.CSTNode = call
    parent = index.parents.get(top)
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)) and (
            not isinstance(parent, cst.BinaryOperation) or isinstance(parent.operator, (cst.Add, cst.Subtract))):
        top = parent
        parent = index.parents.get(top)
    if top is call:
        return False
    inner = " ".join(index.code(call.func.value).split())  # type: ignore[union-attr]
    for term in _terms(top):  # type: ignore[arg-type]
        if term is call:
            continue
        text = " ".join(index.code(term).split()).strip("()")
        if text and (text in inner) and not any(n is call for n in walk(term)):
            return True
    return False


def step_calls(tl: TrainingLoop):
    """The argument-less `.step()` calls of the loop's optimizer-step statement, with their receivers as written
    (`opt`, `self.opt`; None when not a dotted name), in source order."""
    if tl.opt_step is None:
        return
    for call in calls_in(tl.opt_step.node):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and not call.args:
            yield call, dotted(call.func.value)


def optimized_parts(tl: TrainingLoop) -> set[str] | None:
    """The modules, as written (`self.model.heads[-1]`), whose `.parameters()` the optimizer this step runs
    (`opt.step()`, `self.opt.step()`) was built from in this scope: `torch.optim.SGD(self.model.heads[-1]
    .parameters(), lr=lr)` trains only that head. None when a binding of the optimizer that comes before the
    step is not such a call (a parameter list, param groups, a factory, a binding in another method)."""
    if tl.opt_step is None:
        return None
    recv = None
    for _call, recv in step_calls(tl):
        pass  # the statement's last `.step()`
    bound = [b for b in tl.flow.bindings if recv is not None and b.name == recv and 0 <= b.step < tl.opt_step.index]
    if not bound:
        return None
    parts: set[str] = set()
    for b in bound:
        value = b.value
        if b.kind is not Kind.OPTIMIZER or not isinstance(value, cst.Call):
            return None
        first = next((a for a in value.args if a.keyword is None or a.keyword.value == "params"), None)
        held = first.value if first is not None and not first.star else None
        if not (isinstance(held, cst.Call) and isinstance(held.func, cst.Attribute) and
                held.func.attr.value == "parameters" and not held.args):
            return None
        parts.add(cst.Module([]).code_for_node(held.func.value).strip())
    return parts


__all__ = ["GradPaths", "is_break", "straight_through"]
