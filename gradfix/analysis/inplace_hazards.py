"""Whether an in-place op of a scope may be one GF101 can show, decided on CPython's tree.

gradscopes.py keeps a scope for GF101 when it holds an in-place op on a name that may be a tensor and may
hold a value that requires grad. In library forwards that is almost every scope (`hidden_states +=
residual`), while a finding needs much more: the written tensor saved by an op autograd records, a live
alias of it, a leaf that requires grad, or one of several views. This module replays, in source order, the
part of `Flow`'s walk (flow.py, flow_classify.py, flow_saves.py, provenance.py) those findings read, with
every test an over-approximation, so that a scope it rejects is one where GF101's `_inspect` returns None for
every op.

What it mirrors (the flow keeps one current binding per name, the last in source order; a statement's value
is walked before its targets are bound):
- bindings: assignment and annotated-assignment targets (a name, the names of an unpacking, a dotted
  attribute), `for` and `with ... as` targets, `def` / `class` names, parameters. A binding is an alias of
  the one its value's chain starts from (`Classify.alias_root`: names, view methods and attributes, in-place
  and maybe-alias methods, subscripts; any subscript counts here); it may be tensor-typed (`_tensor`), may
  require grad (`_grad`: a module's call or parameter, a parameter of the function, a tensor asked for grad,
  and what is computed from those), and may save its output when its value is a call `classify` may mark so
  (`_may_save_output`).
- saves (`SaveEffects`), each recorded only when what must require grad for it may (`_really_saved`) and
  grad may be on: the receiver of an input-saving or binary-saving method, the positional arguments of a
  call whose last name is an input-saving function, the first argument of a module call (`self.x(...)` with
  `self.x` built from an input-saving module class in the class, or a name the scope binds to one), the
  sides of `*` and `/` between tensors, of `@`, and the left of `**`.
- escapes: the arguments of container methods (`append`, `update`, ...), the values stored into an attribute
  or a subscript, the elements of a display bound to a name.
- in-place ops: augmented assignments to a name or a subscript, item assignments, calls of in-place methods.

An op under a `with` that surely turns grad off, or bound to no binding, is never reported (`_inspect`'s
first test). Else it may be reported when its name is one a leaf that requires grad may be bound to
(`_leaf_inplace`); when, for its binding or an earlier binding of the name that a path through `if`
statements may bring to it (`_saved_on_a_skipping_path`, saves inside those `if`s left out), some binding
sharing its storage was made by an op that may save its output, or was saved, at or before the op; when its
binding may require grad and another binding of the storage is read after the op, or the storage escaped
before it (`live_aliases`); when the binding is a parameter of a function, other than `forward`, that some
call in the file hands a saved tensor (`_saved_at_a_call_site`); or when it is bound once, by unpacking a
`chunk` / `split` / `unbind` call, and may require grad (`_multi_view_write`). `match` bodies are not
walked: nor are they by the flow.

tests/test_inplace_hazards.py keeps a reported case for each of these and drops library shapes;
tests/test_prescan_equivalence.py runs the rules with and without the pre-pass on every golden file;
bench/same_findings.py compares whole trees.
"""

from __future__ import annotations

import ast

from gradfix.analysis.hazard_facts import (DEFS, SAVES_INPUT_MODULES, SAVES_OUTPUT_CALLS, SAVES_OUTPUT_MODULES,
                                          FileFacts, dotted_name, lasts)
from gradfix.analysis.torchapi import (BINARY_SAVING_METHODS, INPLACE_METHODS, INPUT_SAVING_FUNCS,
                                       INPUT_SAVING_METHODS, MAYBE_ALIAS_METHODS, MULTI_VIEW_FUNCS, MULTI_VIEW_METHODS,
                                       NON_DIFFERENTIABLE_FUNCS, NON_DIFFERENTIABLE_METHODS, OUTPUT_SAVING_METHODS,
                                       TENSOR_FACTORIES, VIEW_ATTRIBUTES, VIEW_METHODS, is_inplace_method)

_SAVES_INPUT_FUNCS = lasts(INPUT_SAVING_FUNCS)
_MULTI_VIEW = MULTI_VIEW_METHODS | lasts(MULTI_VIEW_FUNCS)
_ALIAS_METHODS = VIEW_METHODS | MAYBE_ALIAS_METHODS | {"chunk", "split", "unbind"}
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "put"})
_CUT_ATTRIBUTES = frozenset({"data", "grad", "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad",
                             "grad_fn", "is_leaf", "layout"})
_PASSTHROUGH_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# methods whose result provenance.py reads from the receiver and arguments whatever the receiver's kind
_THROUGH_METHODS = OUTPUT_SAVING_METHODS | INPUT_SAVING_METHODS | VIEW_METHODS | frozenset(INPLACE_METHODS) | {"clone"}
_TENSOR_TYPES = frozenset({"Tensor", "FloatTensor"})


class _Binding:
    __slots__ = ("name", "step", "alias", "saves_output", "branch", "multi_view", "last_read", "tensor",
                 "param", "grad", "loops")

    def __init__(self, name, step, alias, saves_output, branch, multi_view=False, tensor=False):
        self.name, self.step, self.alias, self.saves_output = name, step, alias, saves_output
        self.branch, self.multi_view = branch, multi_view
        self.tensor = tensor    # its kind may be TENSOR or PARAMETER, or it is a parameter of unknown type
        self.param = False      # a parameter of the function other than `self` / `cls`
        self.loops: tuple = ()  # the loops it is bound in
        self.grad = False       # may its value require grad (provenance.py `Grad`: shown, or through parameters)
        self.last_read = -2     # the last step that reads the name while it holds this binding

    def root(self) -> "_Binding":
        b, seen = self, set()
        while b.alias is not None and id(b) not in seen:
            seen.add(id(b))
            b = b.alias
        return b


class _Walk:
    """One scope's replay (see the module docstring)."""

    def __init__(self, facts: FileFacts, cls_name: str | None, node):
        self.facts = facts
        self.cls_name = cls_name
        self.env: dict[str, _Binding] = {}
        self.bindings: list[_Binding] = []
        self.saves: list[tuple[_Binding, int, tuple]] = []
        self.escapes: list[tuple[_Binding, int]] = []
        self.events: list[tuple[int, _Binding, tuple]] = []   # in-place ops with grad possibly on
        # (callee's last name, step, bindings of the names passed) of the calls made with grad possibly on
        self.call_sites: list[tuple[str, int, list[_Binding]]] = []
        self._tables = None
        self._caller: bool | None = None    # a call site of the function hands a saved tensor (asked once)
        self.step = 0
        self.branch: tuple = ()
        # names `_leaf_inplace` may find a leaf that requires grad in: a binding's value asks for it (a factory
        # given requires_grad, a Parameter, `.requires_grad_()`), or a statement sets it on the name
        self.leaf_names: set[str] = set()
        self.no_grad = False        # grad mode surely off where the walk is
        # the loops, `with` and `try` statements around the statement walked (their ids): a binding in one the op
        # is not in may not have run (a loop), or be one the flow never made (libcst walks no statement of a
        # one-line suite, `with ctx: h = f(x)`, which CPython's tree does not tell apart)
        self.loops: tuple = ()
        self.params: set[str] = set()
        if type(node) is not ast.Module:
            a = node.args
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)):
                if p.arg in ("self", "cls"):
                    self._bind(p.arg, -1, None, False)   # Kind.OTHER: no tensor, no parameter of unknown type
                    continue
                self.params.add(p.arg)
                # `_bind_params`: Kind.TENSOR for a tensor annotation, or an unannotated parameter of `forward`;
                # any other is UNKNOWN (or MODULE): a root `_save` records and `is_tensor` may accept, but no
                # operand `classify` makes a tensor
                ann = p.annotation
                kind = facts.named(ann, _TENSOR_TYPES) if ann is not None else node.name == "forward"
                b = self._bind(p.arg, -1, None, False, tensor=kind)
                b.param = b.grad = True     # `Grad(deps={name})`: its call sites decide
        self.node = node
        self._assigned: dict[str, list] | None = None

    # -- bindings ----------------------------------------------------------
    def _bind(self, name, step, alias, saves_output, multi_view=False, tensor=False,
              grad=False, masked=True) -> _Binding:
        b = _Binding(name, step, alias, saves_output, self.branch, multi_view, tensor)
        b.grad = grad and not (masked and self.no_grad)     # `_value_grad`: NO under no_grad
        b.loops = self.loops
        self.bindings.append(b)
        self.env[name] = b
        return b

    def _root(self, expr) -> _Binding | None:
        """`alias_root`'s binding, or a superset of its answers."""
        while True:
            t = type(expr)
            if t is ast.Name:
                return self.env.get(expr.id)
            if t is ast.Call and type(expr.func) is ast.Attribute:
                meth = expr.func.attr
                if meth in ("to", "type", "float", "double", "half") and any(
                        k.arg == "copy" and type(k.value) is ast.Constant and k.value.value is True
                        for k in expr.keywords):
                    return None     # `_copies`: an explicit copy
                if meth in _ALIAS_METHODS or meth in INPLACE_METHODS or is_inplace_method(meth):
                    expr = expr.func.value
                    continue
                return None
            if t is ast.Attribute:
                dotted = dotted_name(expr)
                if dotted is not None and dotted in self.env:
                    return self.env[dotted]
                if expr.attr in VIEW_ATTRIBUTES:
                    expr = expr.value
                    continue
                return None
            if t is ast.Subscript or t is ast.Starred:
                expr = expr.value
                continue
            return None

    def _tensor(self, expr, depth: int = 0) -> bool:
        """Whether `classify(expr)` may give TENSOR or PARAMETER (gradscopes.py `_value_kind`, with names read
        through their bindings)."""
        if depth > 40:
            return True
        depth += 1
        t = type(expr)
        if t is ast.Name:
            b = self.env.get(expr.id)
            return b is not None and b.tensor
        if t is ast.Call:
            return True
        if t is ast.BinOp:
            return self._tensor(expr.left, depth) or self._tensor(expr.right, depth)
        if t is ast.UnaryOp:
            return self._tensor(expr.operand, depth)
        if t is ast.Subscript:
            return self._tensor(expr.value, depth)
        if t is ast.Attribute:
            return (expr.attr in VIEW_ATTRIBUTES or expr.attr == "grad") and self._tensor(expr.value, depth)
        if t is ast.IfExp:
            return self._tensor(expr.body, depth) and self._tensor(expr.orelse, depth)
        return False

    # -- provenance (provenance.py `_GradOf`, over-approximated: may the value be `YES` or depend on parameters)
    def _grad(self, expr, depth: int = 0) -> bool:
        if depth > 40:
            return True
        t = type(expr)
        d = depth + 1
        if t is ast.Name:
            b = self.env.get(expr.id)
            return b is not None and b.grad
        if t is ast.Call:
            return self._grad_call(expr, d)
        if t is ast.Attribute:
            if expr.attr in _CUT_ATTRIBUTES:
                return False
            dotted = dotted_name(expr)
            if dotted is not None and dotted in self.env:
                return self.env[dotted].grad
            if expr.attr in _PASSTHROUGH_ATTRIBUTES:
                return self._grad(expr.value, d)
            if type(expr.value) is ast.Name and expr.value.id == "self":
                return self.cls_name is None or expr.attr in self.facts.class_parameters(self.cls_name)
            return False
        if t is ast.BinOp:
            return self._grad(expr.left, d) or self._grad(expr.right, d)
        if t is ast.BoolOp:
            return any(self._grad(v, d) for v in expr.values)
        if t is ast.UnaryOp:
            return type(expr.op) is not ast.Not and self._grad(expr.operand, d)
        if t is ast.IfExp:
            return self._grad(expr.body, d) or self._grad(expr.orelse, d)
        if t in (ast.List, ast.Tuple, ast.Set):
            return any(self._grad(e, d) for e in expr.elts)
        if t is ast.Dict:
            return any(self._grad(v, d) for v in expr.values)
        if t in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return self._grad(expr.elt, d) or any(
                type(g.iter) is ast.Call and type(g.iter.func) is ast.Attribute
                and g.iter.func.attr in ("parameters", "named_parameters") for g in expr.generators)
        if t is ast.Subscript or t is ast.Starred or t is ast.NamedExpr:
            return self._grad(expr.value, d)
        return False        # literals, comparisons, lambdas, f-strings: NO; anything else UNKNOWN

    def _args_grad(self, call: ast.Call, d: int) -> bool:
        return any(self._grad(a, d) for a in call.args) or any(
            self._grad(k.value, d) for k in call.keywords if k.arg not in ("dim", "keepdim", "dtype", "device"))

    def _grad_call(self, call: ast.Call, d: int) -> bool:
        func = call.func
        facts = self.facts
        for k in call.keywords:
            if k.arg == "requires_grad" and not (type(k.value) is ast.Constant and k.value.value is False):
                return True     # a factory, a Parameter or a Variable asked for it
        if facts.named(func, facts.parameter_names):
            return True
        for q in facts.qualnames(func):
            if type(func) is ast.Attribute and (q is None or not q.startswith(("torch.", "numpy."))):
                if self._method_grad(call, func, d):
                    return True
                continue
            if type(func) is ast.Name and func.id in self._assignments_keys():
                return True     # a module bound in the scope: its output (`module_output_grad`)
            if q is None or q.startswith("numpy.") or not q.startswith("torch."):
                continue        # UNKNOWN or NO
            if q in TENSOR_FACTORIES or q in NON_DIFFERENTIABLE_FUNCS:
                continue        # a factory not asked for grad, or an integer / boolean result
            if self._args_grad(call, d):
                return True     # `torch.cat(xs)`: its arguments' (a module's constructor is NO: a superset)
        return False

    def _method_grad(self, call: ast.Call, func: ast.Attribute, d: int) -> bool:
        meth = func.attr
        recv = func.value
        if meth in NON_DIFFERENTIABLE_METHODS:
            return False
        if meth == "requires_grad_":
            return not (call.args and type(call.args[0]) is ast.Constant and call.args[0].value is False)
        if meth in ("forward", "__call__", "parameters", "named_parameters"):
            return True     # a module's call or its parameters (or `super().forward(x)`)
        if type(recv) is ast.Name and recv.id == "self":
            if self.cls_name is None or meth in self.facts.class_attrs_called(self.cls_name) or \
                    meth in self.facts.class_parameters(self.cls_name):
                return True     # a submodule's call
            return meth in _THROUGH_METHODS and self._args_grad(call, d)
        return self._grad(recv, d) or self._args_grad(call, d)

    def _assignments_keys(self):
        if self._assigned is None:
            self._assigned = self._assignments()
        return self._assigned

    def _may_save_output(self, value) -> bool:
        """Whether `classify(value)` may say "saves its output" (only a call can)."""
        if type(value) is not ast.Call:
            return False
        func = value.func
        facts = self.facts
        if type(func) is ast.Attribute:
            if type(func.value) is ast.Name and func.value.id == "self":
                return self.cls_name is None or func.attr in facts.class_attrs(self.cls_name)[0]
            return func.attr in SAVES_OUTPUT_CALLS
        if type(func) is ast.Name:
            return facts.named(func, SAVES_OUTPUT_CALLS) or self._module_name(func.id, True)
        return False

    def _assignments(self) -> dict[str, list]:
        # the values each name is assigned in the scope (a module bound to a name: `act = nn.ReLU()`), and the
        # annotations of parameters (`act: nn.ReLU`): what `classify` may make a module binding of
        assigned: dict[str, list] = {}
        if type(self.node) is not ast.Module:
            a = self.node.args
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if p.annotation is not None:
                    assigned.setdefault(p.arg, []).append(("annotation", p.annotation))
        for n in self.facts.ix.walk(self.node):
            t = type(n)
            if (t is ast.Assign or t is ast.AnnAssign) and n.value is not None:
                for tgt in (n.targets if t is ast.Assign else (n.target,)):
                    if type(tgt) is ast.Name:
                        assigned.setdefault(tgt.id, []).append(("value", n.value))
                    elif type(tgt) in (ast.Tuple, ast.List) and type(n.value) in (ast.Tuple, ast.List) and \
                            len(tgt.elts) == len(n.value.elts):
                        for x, v in zip(tgt.elts, n.value.elts):
                            if type(x) is ast.Name:
                                assigned.setdefault(x.id, []).append(("value", v))
        return assigned

    def _module_name(self, name: str, output: bool, seen: frozenset = frozenset()) -> bool:
        """May `name` be bound to a module that saves its output (`output`) or its input: some value the scope
        assigns it builds one (or is another name that may be one, or an attribute: `m = self.fc`), or a
        parameter's annotation names one (`b.ctor` / `module_saves_output`)."""
        facts = self.facts
        if self._assigned is None:
            self._assigned = self._assignments()
        for how, value in self._assigned.get(name, ()):
            if how == "annotation":
                if facts.named(value, SAVES_OUTPUT_MODULES if output else SAVES_INPUT_MODULES):
                    return True
            elif type(value) is ast.Attribute:
                return True
            elif type(value) is ast.Name:
                if value.id not in seen and self._module_name(value.id, output, seen | {name}):
                    return True
            elif facts.module_saves_output(value) if output else facts._saves_input(value):
                return True
        return False

    def _multi_view(self, value) -> bool:
        if type(value) is ast.Subscript:
            value = value.value
        return type(value) is ast.Call and self.facts.named(value.func, _MULTI_VIEW)

    # -- statements (flow.py `_statement`) ------------------------------------
    def block(self, stmts, no_grad: bool) -> None:
        for stmt in stmts:
            self.statement(stmt, no_grad)

    def statement(self, stmt, no_grad: bool) -> None:
        t = type(stmt)
        if t is ast.If:
            chain, outer = id(stmt), self.branch
            k = 0
            node = stmt
            while True:
                self.branch = outer
                self._expr(node.test, no_grad)
                self.step += 1
                self.branch = outer + ((chain, k),)
                self.block(node.body, no_grad)
                k += 1
                if len(node.orelse) == 1 and type(node.orelse[0]) is ast.If:
                    node = node.orelse[0]
                    continue
                if node.orelse:
                    self.branch = outer + ((chain, k),)
                    self.block(node.orelse, no_grad)
                break
            self.branch = outer
        elif t is ast.For or t is ast.AsyncFor:
            self._expr(stmt.iter, no_grad)
            it = stmt.iter
            attr = it.func.attr if type(it) is ast.Call and type(it.func) is ast.Attribute else None
            grad = attr in ("parameters", "named_parameters")       # `_for_grad`: YES, else UNKNOWN or NO
            for x in self.facts.ix.walk(stmt.target):
                if type(x) is ast.Name:
                    self._leaf_value(x.id, it)      # `for w in torch.zeros(2, requires_grad=True)`
            if attr in ("parameters", "buffers") and type(stmt.target) is ast.Name:
                self._bind(stmt.target.id, self.step, None, False, tensor=True, grad=grad,
                           masked=False)     # Kind.PARAMETER; `_for_grad` is not masked under no_grad
            else:
                self._bind_target(stmt.target, grad, masked=False)
            self.step += 1
            self.loops += (id(stmt),)
            self.block(stmt.body, no_grad)
            self.block(stmt.orelse, no_grad)
            self.loops = self.loops[:-1]
        elif t is ast.While:
            self._expr(stmt.test, no_grad)
            self.step += 1
            self.loops += (id(stmt),)
            self.block(stmt.body, no_grad)     # the flow walks no `else` of a `while`
            self.loops = self.loops[:-1]
        elif t is ast.With or t is ast.AsyncWith:
            for item in stmt.items:
                self._expr(item.context_expr, no_grad)
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars)
            self.step += 1
            self.loops += (id(stmt),)
            self.block(stmt.body, self._with_no_grad(stmt, no_grad))
            self.loops = self.loops[:-1]
        elif t is ast.Try:
            self.loops += (id(stmt),)
            self.block(stmt.body, no_grad)
            for h in stmt.handlers:
                self.block(h.body, no_grad)
            self.block(stmt.orelse, no_grad)
            self.block(stmt.finalbody, no_grad)
            self.loops = self.loops[:-1]
        elif t in DEFS or t is ast.ClassDef:
            self._bind(stmt.name, self.step, None, False)
        elif t is ast.Match:
            self._expr(stmt.subject, no_grad)
            self.step += 1
        elif t.__name__ == "TryStar":
            self.step += 1      # libcst's TryStar is walked as a compound statement with no expression
        else:
            self._small(stmt, no_grad)
            self.step += 1

    def _with_no_grad(self, stmt, outer: bool) -> bool:
        """Grad surely off in the body: the first item is a call that surely resolves to a no_grad context,
        or grad was off and every item is such a call (anything else might turn grad back on)."""
        surely = [type(i.context_expr) is ast.Call and self.facts.surely_no_grad(dotted_name(i.context_expr.func))
                  for i in stmt.items]
        return surely[0] or (outer and all(surely))

    def _small(self, stmt, no_grad: bool) -> None:
        t = type(stmt)
        if t is ast.Assign:
            self._expr(stmt.value, no_grad)
            for tgt in stmt.targets:
                self._assign(tgt, stmt.value, no_grad)
        elif t is ast.AnnAssign:
            if stmt.value is not None:
                self._expr(stmt.value, no_grad)
                self._assign(stmt.target, stmt.value, no_grad)
        elif t is ast.AugAssign:
            self._expr(stmt.value, no_grad)
            tgt = stmt.target
            if type(tgt) is ast.Name:
                b = self.env.get(tgt.id)
                if b is not None:
                    b.last_read = self.step
                self._event(b, no_grad)
            elif type(tgt) is ast.Subscript:
                self._expr(tgt, no_grad)
                self._event(self._root(tgt.value), no_grad)
            else:
                self._expr(tgt, no_grad)
        else:
            for child in self.facts.ix.children(stmt):
                if isinstance(child, ast.expr):
                    self._expr(child, no_grad)

    def _bind_target(self, target, grad: bool = False, masked: bool = True) -> None:
        """`_bind_target`: a name, or each name of a tuple (the last element keeps the loop's grad)."""
        t = type(target)
        if t is ast.Name:
            self._bind(target.id, self.step, None, False, grad=grad, masked=masked)
        elif t is ast.Tuple or t is ast.List:
            for el in target.elts:
                self._bind_target(el.value if type(el) is ast.Starred else el, grad and el is target.elts[-1],
                                  masked)

    def _assign(self, target, value, no_grad: bool) -> None:
        t = type(target)
        if t is ast.Name:
            self._bind(target.id, self.step, self._root(value), self._may_save_output(value),
                       self._multi_view(value), self._tensor(value), self._grad(value))
            self._leaf_value(target.id, value)
            if type(value) in (ast.List, ast.Tuple, ast.Set):
                for el in value.elts:
                    self._escape(el)
            elif type(value) is ast.Dict:
                for el in value.values:
                    self._escape(el)
        elif t is ast.Tuple or t is ast.List:
            pairs = _parallel_pairs(target, value, self.facts.ix)
            if pairs is not None:
                for tg, v in pairs:
                    self._assign(tg, v, no_grad)
                return
            alias = self._root(value)
            multi = self._multi_view(value)
            tensor = self._tensor(value)
            grad = self._grad(value)
            for el in target.elts:
                tg = el.value if type(el) is ast.Starred else el
                if type(tg) is ast.Name:
                    self._bind(tg.id, self.step, alias, False, multi, tensor, grad)
                    self._leaf_value(tg.id, value)
                elif type(tg) not in (ast.Tuple, ast.List):
                    self._assign(tg, value, no_grad)
        elif t is ast.Attribute:
            self._expr(target.value, no_grad)
            self._escape(value)
            if target.attr == "requires_grad" and type(target.value) is ast.Name:
                self.leaf_names.add(target.value.id)    # `w.requires_grad = True` (`requires_grad_set`)
            dotted = dotted_name(target)
            if dotted is not None:
                self._bind(dotted, self.step, self._root(value), False, tensor=self._tensor(value),
                           grad=self._grad(value))
        elif t is ast.Subscript:
            self._expr(target, no_grad)
            self._escape(value)
            self._event(self._root(target.value), no_grad)

    def _leaf_value(self, name: str, value) -> None:
        """`leaf_ctor(value)` may be a leaf that requires grad: some call in it is given `requires_grad=`, is a
        `.requires_grad_()` or a Parameter."""
        facts = self.facts
        for n in facts.ix.walk(value):
            if type(n) is ast.Call and (any(k.arg == "requires_grad" for k in n.keywords) or
                                        facts.named(n.func, facts.parameter_names) or
                                        type(n.func) is ast.Attribute and n.func.attr == "requires_grad_"):
                self.leaf_names.add(name)
                return

    def _escape(self, expr) -> None:
        b = self._root(expr)
        if b is not None:
            self.escapes.append((b, self.step))

    def _save(self, expr, cond: bool) -> None:
        """`_save`: recorded when grad mode may be on and `cond` (what must require grad) may."""
        if not cond or self.no_grad:
            return
        b = self._root(expr)
        if b is not None and (b.tensor or b.param):  # a tensor's root, or a parameter's (`_save`)
            self.saves.append((b, self.step, self.branch))

    def _event(self, b, no_grad: bool) -> None:
        if b is not None and not no_grad:
            self.events.append((self.step, b, self.branch, self.loops))

    # -- expressions (flow.py `_expr`, flow_saves.py) ---------------------------
    def _expr(self, expr, no_grad: bool) -> None:
        facts = self.facts
        self.no_grad = no_grad
        stack = [expr]
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.Name:
                b = self.env.get(node.id)
                if b is not None:
                    b.last_read = self.step
                continue
            if t is ast.Lambda:
                continue
            if t is ast.Call:
                self._call(node, no_grad)
            elif t is ast.BinOp:
                op = type(node.op)
                if op is ast.Pow:
                    if self._tensor(node.left):
                        self._save(node.left, self._grad(node.left))
                elif op is ast.MatMult or (op is ast.Mult and self._tensor(node.left) and self._tensor(node.right)) \
                        or (op is ast.Div and self._tensor(node.right)):
                    # `_product_saves`: each side for the other's gradient (a divisor for either's)
                    lg, rg = self._grad(node.left), self._grad(node.right)
                    self._save(node.left, rg)
                    self._save(node.right, lg or rg if op is ast.Div else lg)
            stack.extend(facts.ix.children(node))

    def _call(self, call: ast.Call, no_grad: bool) -> None:
        func = call.func
        facts = self.facts
        last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if last == "requires_grad_" and type(func) is ast.Attribute and type(func.value) is ast.Name:
            self.leaf_names.add(func.value.id)      # `w.requires_grad_()` after `w = torch.zeros(3)`
        first = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
        if type(first) is ast.Starred:
            first = first.value     # libcst's `Arg.value` of `*ys`
        if last is not None and not no_grad:
            passed = [self.env.get(a.id) for a in (*call.args, *(k.value for k in call.keywords))
                      if type(a) is ast.Name]
            if passed:
                self.call_sites.append((last, self.step, [b for b in passed if b is not None]))
        if type(func) is ast.Attribute:
            meth = func.attr
            if meth in INPLACE_METHODS or is_inplace_method(meth):
                self._event(self._root(func.value), no_grad)
            recv = func.value
            if self._tensor(recv) or (type(recv) is ast.Name and recv.id in self.params):
                if meth in INPUT_SAVING_METHODS:
                    self._save(recv, self._grad(recv))
                elif meth in BINARY_SAVING_METHODS and first is not None and self._tensor(first):
                    lg, rg = self._grad(recv), self._grad(first)
                    self._save(recv, rg)
                    self._save(first, lg or rg if meth in ("div", "divide") else lg)
            if meth in _CONTAINER_METHODS:
                for arg in call.args:
                    self._escape(arg)
                for k in call.keywords:
                    self._escape(k.value)
            if type(func.value) is ast.Name and func.value.id == "self" and first is not None and (
                    self.cls_name is None or meth in facts.class_attrs(self.cls_name)[1]):
                self._save(first, self._grad(call))     # `self.fc(x)`: a Linear saves its input
        elif type(func) is ast.Name and first is not None and self._module_name(func.id, False):
            self._save(first, self._grad(call))         # `fc(x)` with `fc` a module the scope binds
        if facts.named(func, _SAVES_INPUT_FUNCS):
            cond = self._grad(call)
            for arg in call.args:
                self._save(arg, cond)

    # -- the test --------------------------------------------------------------
    def _groups(self):
        """(members by root, saves by root as (step, branch), first escape by root), keyed by the root's id."""
        if self._tables is None:
            by_root: dict[int, list[_Binding]] = {}
            for b in self.bindings:
                by_root.setdefault(id(b.root()), []).append(b)
            saves: dict[int, list[tuple[int, tuple]]] = {}
            for b, step, branch in self.saves:
                saves.setdefault(id(b.root()), []).append((step, branch))
            escaped_at: dict[int, int] = {}
            for b, step in self.escapes:
                r = id(b.root())
                escaped_at[r] = min(step, escaped_at.get(r, step))
            self._tables = (by_root, saves, escaped_at)
        return self._tables

    def saved_by(self, b: _Binding, step: int, skipped: frozenset = frozenset()) -> bool:
        """Some binding sharing `b`'s storage may save its output, or was saved, at or before `step`, outside
        the `if` chains in `skipped` (`_saved_on_a_skipping_path` does not count saves inside those)."""
        by_root, saves, _escaped = self._groups()
        r = id(b.root())
        if skipped:
            def outside(branch) -> bool:
                return not any(cid in skipped for cid, _k in branch)
            return any(i <= step and outside(branch) for i, branch in saves.get(r, ())) or any(
                m.saves_output and m.grad and 0 <= m.step <= step and outside(m.branch) for m in by_root[r])
        return any(i <= step for i, _branch in saves.get(r, ())) or \
            any(m.saves_output and m.grad and 0 <= m.step <= step for m in by_root[r])

    def may_show(self, fn_name: str | None) -> bool:
        if not self.events:
            return False
        by_root, _saves, escaped_at = self._groups()
        by_name: dict[str, list[_Binding]] = {}
        for b in self.bindings:
            by_name.setdefault(b.name, []).append(b)
        for step, b, branch, loops in self.events:
            same_name = by_name[b.name]
            if b.name in self.leaf_names:
                return True                 # `_leaf_inplace`: `leaf_at` needs a leaf constructor for the name
            if len(same_name) == 1 and b.multi_view and b.grad:
                return True                 # `_multi_view_write`
            if self._shown_directly(b, step, fn_name):
                return True
            # `_saved_on_a_skipping_path`: an earlier binding that reaches the op when `if`s rebinding the name do
            # not run; saves inside those `if`s do not count (`reaching`'s `skipped` for it: the chains of the
            # bindings passed before its own chain)
            inside = dict(branch)
            skipped: set[int] = set()
            seen: dict[int, frozenset] = {}
            passed_block = False    # an earlier binding may then be the flow's own binding of the op
            for c in reversed([o for o in same_name if o.step < step or o is b]):
                if any(inside.get(cid, k) != k for cid, k in c.branch):
                    continue                # in another branch of an `if` the op is in (`flow.exclusive`)
                if c is not b and passed_block and self._shown_directly(c, step, fn_name):
                    return True
                if any(loop not in loops for loop in c.loops):
                    passed_block = True     # earlier bindings may reach the op too
                    continue
                outer = next((cid for cid, k in c.branch if cid not in inside), None)
                if outer is None:
                    own = frozenset(skipped)
                else:
                    if outer not in seen:
                        seen[outer] = frozenset(skipped)
                        skipped.add(outer)
                    own = seen[outer]
                if c is not b and (c.tensor or c.param) and own and self.saved_by(c, step, own):
                    return True
                if outer is None:
                    break                   # this binding surely ran before the op: earlier ones do not reach it
        return False

    def _shown_directly(self, b: _Binding, step: int, fn_name: str | None) -> bool:
        """`_inspect`'s tests on the op's own binding: saved, or a live alias or escape of a tensor that requires
        grad, or a parameter some call site hands a saved tensor."""
        if not (b.tensor or b.param):       # `flow.is_tensor(binding)`
            return False
        by_root, _saves, escaped_at = self._groups()
        r = id(b.root())
        if self.saved_by(b, step):
            return True
        # no save: only a live alias of a tensor that requires grad (`flow.holds(binding.grad)`)
        if b.grad and escaped_at.get(r, step) < step:
            return True
        # (`live_aliases` leaves out holders linked through `.to()` / `.cpu()` / `.float()`; the replay links more
        # than the flow does, through any subscript and any unpacking, so it cannot leave those out)
        if b.grad and any(m is not b and m.step < step < m.last_read for m in by_root[r]):
            return True             # another holder of the storage is read after the op (`live_aliases`)
        if b.param and fn_name is not None and fn_name != "forward":
            if self._caller is None:
                self._caller = saved_at_a_call(self.facts, fn_name)
            return self._caller     # `_saved_at_a_call_site`
        return False


def _identifier(n) -> str | None:
    t = type(n)
    return n.id if t is ast.Name else n.attr if t is ast.Attribute else n.arg if t in (ast.keyword, ast.arg) else None


def _parallel_pairs(target, value, ix):
    """flow.py `_parallel_pairs`: `a, b = x, y` assigned position by position."""
    if type(value) not in (ast.Tuple, ast.List) or len(target.elts) != len(value.elts):
        return None
    if any(type(e) is ast.Starred for e in (*target.elts, *value.elts)):
        return None
    if not all(type(e) is ast.Name for e in target.elts):
        return None
    names = {e.id for e in target.elts}
    # libcst's walk meets an attribute's and a keyword's name as a Name too (`a, b = self.a, h` is no pair)
    if any(_identifier(n) in names for v in value.elts for n in ix.walk(v)):
        return None
    return list(zip(target.elts, value.elts))


def may_show(facts: FileFacts, node, cls_name: str | None) -> bool:
    """Whether GF101 may report an in-place op of the scope `node` (a function or the module)."""
    return walk_of(facts, node, cls_name).may_show(None if type(node) is ast.Module else node.name)


def walk_of(facts: FileFacts, node, cls_name: str | None) -> "_Walk":
    walk = facts.walks.get(id(node))
    if walk is None:
        walk = facts.walks[id(node)] = _Walk(facts, cls_name, node)
        walk.block(node.body, False)
    return walk

def saved_at_a_call(facts: FileFacts, fn_name: str) -> bool:
    """Some call whose last name is `fn_name`, with grad possibly on, hands a name whose storage an op
    saved before the call (`_saved_at_a_call_site`, which resolves the call and the argument: a superset)."""
    if fn_name not in facts.called:
        return False
    for node, cls_name, calls in facts.scopes:
        if fn_name not in calls:
            continue
        walk = walk_of(facts, node, cls_name)
        for last, step, args in walk.call_sites:
            if last == fn_name and any(walk.saved_by(b, step) for b in args):
                return True
    return False
