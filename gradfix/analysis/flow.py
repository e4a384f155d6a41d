"""A forward pass over one function (or the module body) in source order.

For every name it records what the name is bound to (a tensor, a NumPy array, a
module, an optimizer, ...), which tensors share storage with it (views, detach,
plain assignment), when autograd saved it for backward, when it is read, when it
is mutated in place, and when it escapes into an attribute or a container.

Control flow is linearised: branches are visited in order and loop bodies once.
That is an approximation on purpose: a rule fires only on what this pass can
show, so the approximation costs recall, never precision.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.bindings import TENSORISH, Binding, DetachEvent, Kind, Step, maybe_alias
from gradfix.analysis.flow_classify import Classify
from gradfix.analysis.flow_saves import SaveEffects, _detach_call, _Why
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.provenance import NO, UNKNOWN, YES, Grad, expr_grad, is_parameters_call
from gradfix.analysis.tree import children, if_branches, walk

__all__ = ["TENSORISH", "Binding", "DetachEvent", "Flow", "Kind", "Step", "parallel_elements"]


class Flow(Classify, SaveEffects):
    def __init__(self, index, scope: cst.CSTNode):
        self.index = index
        self.scope = scope
        self.steps: list[Step] = []
        self.bindings: list[Binding] = []
        self.env: dict[str, Binding] = {}
        self.load_binding: dict[int, Binding] = {}       # id(Name) -> binding read
        self.target_binding: dict[int, Binding] = {}     # id(AugAssign / in-place Call) -> binding mutated
        self.step_of: dict[int, Step] = {}               # id(small stmt) -> step
        self.inplace: list[tuple[Step, cst.CSTNode, Binding | None, cst.BaseExpression]] = []
        self.detaches: list[DetachEvent] = []
        self.calls: list[tuple[Step, cst.Call]] = []      # every call, in evaluation order (the call graph)
        # id(expression) -> its provenance where it is evaluated: the walk asks for an operand's
        # provenance at every enclosing product and assignment, which is quadratic in the nesting
        self.grad_memo: dict[int, Grad] = {}
        self.class_name: str | None = None
        self._branch: tuple = ()
        if isinstance(scope, cst.FunctionDef):
            cls = index.enclosing_class(scope)
            if cls is not None and index.enclosing(scope, (cst.FunctionDef,)) is None:
                self.class_name = cls.name.value
            self.function = scope
            self._bind_params(scope)
            no_grad = index.is_no_grad_function(scope)
            self._block(scope.body.body if isinstance(scope.body, cst.IndentedBlock) else [scope.body], no_grad, ())
        else:
            self.function = None
            self._block(scope.body, False, ())

    def and_module(self) -> list["Flow"]:
        """This flow and, for a function, the module-level flow whose names it also reads."""
        index = self.index
        return [self] if self.scope is index.module else [self, index.flow(index.module)]

    def discard(self) -> None:
        """Drop the references back to the file (the index, and the training loops cached on
        this flow, which point back at it): a flow that no version uses any more is then freed
        with its trees by reference counting, without waiting for the cyclic collector."""
        self.index = None
        self.__dict__.pop("_training_loops", None)

    # -- queries ---------------------------------------------------------
    @property
    def in_module_class(self) -> bool:
        return self.class_name is not None and self.class_name in self.index.module_classes

    def visible_bindings(self, name: str) -> list[Binding]:
        """Bindings of `name` (`x`, `self.x`) that code in this scope reads: this scope's, else (in a
        function) the module's, or for `self.x` those of the class's methods."""
        found = [b for b in self.bindings if b.name == name]
        if found or not isinstance(self.scope, cst.FunctionDef):
            return found
        index = self.index
        if name.startswith("self."):
            cls = index.enclosing_class(self.scope)
            if cls is not None:
                for stmt in cls.body.body:
                    if isinstance(stmt, cst.FunctionDef):
                        found += [b for b in index.flow(stmt).bindings if b.name == name]
            return found
        return [b for b in index.flow(index.module).bindings if b.name == name]

    def holds(self, grad: Grad) -> bool | None:
        """Resolve a provenance: True when the value is shown to require grad (directly, or
        through a parameter some call site passes such a value for), False when it cannot,
        None when unknown."""
        if grad.yes:
            return True
        if not grad.deps:
            return None if grad.unknown else False
        answers = [self.index.param_grad(self.function, name) for name in grad.deps] if self.function else [None]
        if True in answers:
            return True
        return None if grad.unknown or None in answers else False

    def exclusive(self, a: int, b: int) -> bool:
        """Steps `a` and `b` sit in different branches of one if/elif/else chain: they never both run."""
        outer = dict(self.steps[a].branch)
        return any(cid in outer and outer[cid] != k for cid, k in self.steps[b].branch)

    def _saves(self, b: Binding, step: int):
        """(step, reason) for each save of `b` (or a tensor sharing its storage) up to `step` that
        autograd really makes: grad mode on, an input that requires grad, and not in a branch
        that excludes `step`."""
        for other in self.bindings:
            if not other.shares_storage(b):
                continue
            if other.saved_output and 0 <= other.step <= step and self._really_saved(other.step, step,
                                                                                       other.saved_output_if):
                yield other.step, _Why(other.value, "`{}` saved its output")
            for i, r, cond in other.saved_at:
                if i <= step and self._really_saved(i, step, cond):
                    yield i, r

    def _really_saved(self, at: int, step: int, cond: Grad) -> bool:
        return not self.steps[at].no_grad and not self.exclusive(at, step) and self.holds(cond) is True

    def saved_before(self, b: Binding, step: int, excluding=None) -> list[str]:
        """Why autograd holds `b` (or a tensor sharing its storage) at `step`; `excluding`: a call
        whose own save does not count (an in-place activation saves its result, not its input)."""
        return [str(r) for _i, r in self._saves(b, step) if excluding is None or getattr(r, "node", None) is not excluding]

    def saved_steps(self, b: Binding, step: int, excluding=None) -> list[int]:
        """The steps at which autograd saved `b` (or a tensor sharing its storage), up to `step`."""
        return [i for i, r in self._saves(b, step) if excluding is None or getattr(r, "node", None) is not excluding]

    def is_tensor(self, b: Binding) -> bool:
        """Tensor-typed, or a parameter of unknown type that a call site passes a value requiring
        grad for (only tensors require grad)."""
        if b.kind in TENSORISH:
            return True
        return b.is_param and b.kind is Kind.UNKNOWN and self.holds(b.grad) is True

    def grad_of(self, expr) -> Grad:
        """The provenance of `expr` (names read as they were bound where `expr` is)."""
        return expr_grad(self, expr)

    def requires_grad(self, expr) -> bool | None:
        return self.holds(self.grad_of(expr))

    def name_binding(self, name: cst.Name) -> Binding | None:
        """The binding a Name reads: where it was read (after the walk), else the current one."""
        b = self.load_binding.get(id(name))
        return b if b is not None else self.env.get(name.value)

    def live_aliases(self, b: Binding, step: int) -> list[str]:
        """Other holders of `b`'s storage that are read after `step`, or escaped before it. A name
        linked through `.cpu()` / `.to()` / `.float()` is not counted: whether it shares the
        storage depends on the device and dtype at run time."""
        found = []
        for other in self.bindings:
            if not other.shares_storage(b) or maybe_alias(other) or maybe_alias(b):
                continue
            if other.step == step:
                # `h = h.mul_(2)`, `s = s.float().masked_fill_(m, v).type_as(s)`: the name holds the
                # result of this very statement, not another holder of the old values
                continue
            if other is not b and other.step <= step and any(r > step for r in other.reads):
                found.append(f"`{other.name}`")
            for i, where in other.escapes:
                if i < step:
                    found.append(str(where))
        return found

    def reads_after(self, b: Binding, step: int) -> bool:
        return any(r > step for r in b.reads)

    # -- walking ---------------------------------------------------------
    def _new_step(self, node, line, no_grad, loops) -> Step:
        st = Step(len(self.steps), node, line, no_grad, loops, self._branch)
        self.steps.append(st)
        self.step_of[id(node)] = st
        return st

    def _bind(self, name: str, **kw) -> Binding:
        b = Binding(name=name, **kw)
        self.bindings.append(b)
        self.env[name] = b
        return b

    def _bind_params(self, fn: cst.FunctionDef) -> None:
        params = list(fn.params.posonly_params) + list(fn.params.params) + list(fn.params.kwonly_params)
        for extra in (fn.params.star_arg, fn.params.star_kwarg):
            if isinstance(extra, cst.Param):
                params.append(extra)
        for p in params:
            name = p.name.value
            kind = Kind.UNKNOWN
            if name in ("self", "cls"):
                kind = Kind.OTHER
            elif p.annotation is not None:
                q = qualname(p.annotation.annotation, self.index.imports) or ""
                if q in ("torch.Tensor", "torch.FloatTensor", "Tensor"):
                    kind = Kind.TENSOR
                elif self.index.is_module_ctor(q) or q == "torch.nn.Module":
                    kind = Kind.MODULE
            elif fn.name.value == "forward" and self.index.enclosing_class(fn) is not None:
                cls = self.index.enclosing_class(fn)
                if cls.name.value in self.index.module_classes:
                    kind = Kind.TENSOR
            self._bind(name, kind=kind, step=-1, value=p, is_param=True,
                       ctor=(qualname(p.annotation.annotation, self.index.imports) if p.annotation else None),
                       grad=UNKNOWN if name in ("self", "cls") else Grad(deps=frozenset({name})))

    def _block(self, stmts, no_grad: bool, loops: tuple) -> None:
        for stmt in stmts:
            self._statement(stmt, no_grad, loops)

    def _statement(self, stmt, no_grad: bool, loops: tuple) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small, stmt, no_grad, loops)
        elif isinstance(stmt, cst.If):
            chain, outer = id(stmt), self._branch
            for k, owner in if_branches(stmt):  # the branches of the chain exclude each other
                if isinstance(owner, cst.If):
                    self._branch = outer  # the test runs whichever branch is taken
                    st = self._new_step(owner, owner, no_grad, loops)
                    self._expr(owner.test, st)
                self._branch = outer + ((chain, k),)
                self._block(owner.body.body, no_grad, loops)
            self._branch = outer
        elif isinstance(stmt, cst.For):
            st = self._new_step(stmt, stmt, no_grad, loops)
            self._expr(stmt.iter, st)
            kind = self._for_kind(stmt.iter)
            self._bind_target(stmt.target, kind, st, stmt.iter, self._for_grad(stmt.iter, kind))
            self._block(stmt.body.body, no_grad, loops + (stmt,))
            if stmt.orelse is not None:
                self._block(stmt.orelse.body.body, no_grad, loops)
        elif isinstance(stmt, cst.While):
            st = self._new_step(stmt, stmt, no_grad, loops)
            self._expr(stmt.test, st)
            self._block(stmt.body.body, no_grad, loops + (stmt,))
        elif isinstance(stmt, cst.With):
            st = self._new_step(stmt, stmt, no_grad, loops)
            for item in stmt.items:
                self._expr(item.item, st)
                if item.asname is not None:
                    # apex's `with amp.scale_loss(loss, opt) as scaled_loss:` yields the scaled loss, a tensor
                    # of the graph; what other context managers yield is not a tensor to the rules
                    kind = Kind.UNKNOWN if _yields_scaled_loss(item.item) else Kind.OTHER
                    self._bind_target(item.asname.name, kind, st, None)
            mode = self.index.grad_mode_of_with(stmt)
            inner = no_grad if mode is None else not mode
            self._block(stmt.body.body, inner, loops)
        elif isinstance(stmt, cst.Try):
            self._block(stmt.body.body, no_grad, loops)
            for h in stmt.handlers:
                self._block(h.body.body, no_grad, loops)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body.body, no_grad, loops)
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body.body, no_grad, loops)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self._bind(stmt.name.value, kind=Kind.OTHER, step=len(self.steps), value=stmt)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            st = self._new_step(stmt, stmt, no_grad, loops)
            for child in children(stmt):
                if isinstance(child, cst.BaseExpression):
                    self._expr(child, st)

    def _for_kind(self, it: cst.BaseExpression) -> Kind:
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute):
            if it.func.attr.value in ("parameters", "buffers"):
                return Kind.PARAMETER
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range":
            return Kind.NUMBER
        return Kind.UNKNOWN

    def _small(self, small, line, no_grad, loops) -> None:
        st = self._new_step(small, line, no_grad, loops)
        if isinstance(small, cst.Assign):
            self._expr(small.value, st)
            for t in small.targets:
                self._assign_target(t.target, small.value, st)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._expr(small.value, st)
                self._assign_target(small.target, small.value, st)
        elif isinstance(small, cst.AugAssign):
            self._expr(small.value, st)
            self._mutate_target(small.target, small, st)
        elif isinstance(small, (cst.Expr, cst.Return)):
            if small.value is not None:
                self._expr(small.value, st)
        else:
            for child in children(small):
                if isinstance(child, cst.BaseExpression):
                    self._expr(child, st)

    # -- targets ---------------------------------------------------------
    def _assign_target(self, target, value, st: Step) -> None:
        if isinstance(target, cst.Name):
            kind, ctor, saved_out, alias, how = self.classify(value)
            no_grad = st.no_grad or (alias is not None and alias.no_grad) or self._derived_no_grad(value)
            grad = self._value_grad(value, st)
            b = self._bind(target.value, kind=kind, step=st.index, value=value, saved_output=saved_out,
                           alias_of=alias, alias_how=how, no_grad=no_grad, ctor=ctor, grad=grad,
                           saved_output_if=grad)
            self._note_detach(value, st, b, "name")
            if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
                for elem in _container_elements(value):
                    root = self.alias_root(elem)
                    if root is not None:
                        root[0].escapes.append((st.index, f"the container `{target.value}`"))
        elif isinstance(target, (cst.Tuple, cst.List)):
            pairs = _parallel_pairs(target, value)
            if pairs is not None:
                for t, v in pairs:  # `g, d = Generator(), Discriminator()`: each name as if assigned alone
                    self._assign_target(t, v, st)
                return
            kind, _, _, alias, how = self.classify(value)
            unpack_alias = alias if how in ("chunk",) else None
            indices = self._index_positions(value, target)
            for i, el in enumerate(target.elements):
                t = el.value
                if isinstance(t, cst.StarredElement):
                    t = t.value
                if isinstance(t, cst.Name) and i in indices:
                    # `out, lengths = pad_packed_sequence(...)`, `values, idx = x.max(dim=1)`: integer tensors
                    self._bind(t.value, kind=Kind.TENSOR, step=st.index, value=value, no_grad=st.no_grad, grad=NO)
                elif isinstance(t, cst.Name):
                    self._bind(t.value, kind=kind if kind in TENSORISH else Kind.UNKNOWN, step=st.index,
                               value=value, alias_of=unpack_alias, alias_how=how, no_grad=st.no_grad,
                               grad=self._value_grad(value, st))
                else:
                    self._assign_target(t, value, st) if not isinstance(t, (cst.Tuple, cst.List)) else None
        elif isinstance(target, cst.Attribute):
            self._expr(target.value, st)
            root = self.alias_root(value)
            if root is not None:
                root[0].escapes.append((st.index, _Why(target, "the attribute `{}`")))
            holder = None
            name = dotted(target)
            if name is not None:
                # `self.x` is tracked like a name so later `self.x.clamp_()` is seen
                kind, ctor, saved_out, alias, how = self.classify(value)
                holder = self._bind(name, kind=kind, step=st.index, value=value, alias_of=alias, alias_how=how,
                                    no_grad=st.no_grad, ctor=ctor, grad=self._value_grad(value, st))
            self._note_detach(value, st, holder, "attribute")
        elif isinstance(target, cst.Subscript):
            self._expr(target, st)
            root = self.alias_root(value)
            if root is not None:
                root[0].escapes.append((st.index, _Why(target.value, "the container `{}`")))
            self._note_detach(value, st, None, "container")
            base = self.alias_root(target.value)
            if base is not None and base[0].kind in TENSORISH:
                base[0].mutations.append((st.index, st.node))
                # `gate[:, 0] = 1.0` writes into the tensor: an in-place op for autograd
                self.inplace.append((st, st.node, base[0], target))

    def _index_positions(self, value, target) -> frozenset[int]:
        """Positions of a two-name unpacking that hold integer tensors (indices, lengths), which never require
        grad: `torch.sort` / `topk` / `max(dim)` / ... (function or method) and `pad_packed_sequence`."""
        if not (isinstance(value, cst.Call) and len(target.elements) == 2 and
                not any(isinstance(el.value, cst.StarredElement) for el in target.elements)):
            return frozenset()
        func = value.func
        q = qualname(func, self.index.imports) or ""
        if q in _INDEX_SECOND:
            return frozenset({1})
        if isinstance(func, cst.Attribute) and func.attr.value in _INDEX_METHODS and value.args and \
                not q.startswith(("numpy.", "np.")) and self.classify(func.value)[0] in TENSORISH:
            return frozenset({1})
        return frozenset()

    def _bind_target(self, target, kind: Kind, st: Step, value, grad: Grad = UNKNOWN) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, kind=kind, step=st.index, value=value, no_grad=st.no_grad, grad=grad)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                # `for name, p in model.named_parameters()`: the parameter is the last element
                last = grad.yes and el is target.elements[-1]
                self._bind_target(el.value, Kind.UNKNOWN, st, value, grad if last else UNKNOWN)

    @staticmethod
    def _for_grad(it, kind: Kind) -> Grad:
        if is_parameters_call(it):
            return YES
        return NO if kind is Kind.NUMBER else UNKNOWN

    def _mutate_target(self, target, node, st: Step) -> None:
        if isinstance(target, cst.Name):
            b = self.env.get(target.value)
            if b is not None:
                b.reads.append(st.index)
                self.load_binding[id(target)] = b
                self.target_binding[id(node)] = b
                if b.kind in TENSORISH or b.kind in (Kind.UNKNOWN, Kind.NUMPY):
                    b.mutations.append((st.index, node))
            self.inplace.append((st, node, b, target))
        elif isinstance(target, cst.Subscript):
            self._expr(target, st)
            base = self.alias_root(target.value)
            self.inplace.append((st, node, base[0] if base else None, target))
            if base is not None:
                base[0].mutations.append((st.index, node))
        else:
            self._expr(target, st)

    def _note_detach(self, value, st: Step, holder: Binding | None, kept_in: str) -> None:
        call = _detach_call(value)
        if call is None:
            return
        src = self.alias_root(call.func.value)  # type: ignore[union-attr]
        if src is None:
            return
        self.detaches.append(DetachEvent(st.index, call, src[0], holder, kept_in, value))

    # -- expressions -----------------------------------------------------
    def _expr(self, expr: cst.CSTNode, st: Step) -> None:
        stack = [expr]
        while stack:
            node = stack.pop()
            kind = type(node)   # `is`, not isinstance: these classes have no subclasses (tests/test_tree.py)
            if kind is cst.Name:
                b = self.env.get(node.value)
                if b is not None:
                    b.reads.append(st.index)
                    self.load_binding[id(node)] = b
                continue
            if kind is cst.Lambda or kind is cst.FunctionDef:
                continue
            if kind is cst.Attribute or kind is cst.Arg:
                stack.append(node.value)
                continue
            if kind is cst.Call:
                self._call_effects(node, st)
            elif kind is cst.BinaryOperation:
                self._binop_effects(node, st)
            stack.extend(reversed(children(node)))

    def _unknown_param(self, expr) -> bool:
        """A parameter of unknown type: its call sites decide whether it is a tensor (`is_tensor`)."""
        if not isinstance(expr, cst.Name):
            return False
        b = self.env.get(expr.value)
        return b is not None and b.is_param and b.kind is Kind.UNKNOWN

    def _value_grad(self, value, st: Step) -> Grad:
        return NO if st.no_grad else self.grad_of(value)


def _container_elements(value):
    if isinstance(value, cst.Dict):
        return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    return [e.value for e in value.elements]


def parallel_elements(target, value):
    """(target, value) per position of `a, b = x, y` when both sides are displays of the same length and
    nothing is starred; None otherwise."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)) or \
            len(target.elements) != len(value.elements):
        return None
    if any(isinstance(el, cst.StarredElement) or isinstance(el.value, cst.StarredElement)
           for el in (*target.elements, *value.elements)):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]


def _parallel_pairs(target, value):
    """`parallel_elements` when every target is a name and no value reads a name the statement binds
    (`a, b = b, a` swaps: each value is read before any binding, so position by position would be wrong)."""
    pairs = parallel_elements(target, value)
    if pairs is None or not all(isinstance(t, cst.Name) for t, _v in pairs):
        return None
    names = {t.value for t, _v in pairs}
    if any(isinstance(n, cst.Name) and n.value in names for _t, v in pairs for n in walk(v)):
        return None
    return pairs


def _yields_scaled_loss(expr) -> bool:
    """`amp.scale_loss(loss, optimizer)` (apex) or a project's `scale_loss(...)` given the loss first."""
    func = expr.func if isinstance(expr, cst.Call) else None
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name == "scale_loss" and bool(expr.args)


# calls whose second result is an index or length tensor (never requires grad)
_INDEX_METHODS = frozenset({"sort", "topk", "max", "min", "kthvalue", "mode", "median", "cummax", "cummin"})
_INDEX_SECOND = frozenset({"torch.nn.utils.rnn.pad_packed_sequence", *(f"torch.{m}" for m in _INDEX_METHODS)})
