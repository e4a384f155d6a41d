"""Whether an in-place op of a scope may be one GF101 can show, decided on CPython's tree.

gradscopes.py keeps a scope for GF101 when it holds an in-place op on a name that may be a tensor and may
hold a value that requires grad. In library forwards that is almost every scope (`hidden_states +=
residual`), while a finding needs much more: the written tensor saved by an op autograd records, a live
alias of it, a leaf that requires grad, or one of several views. This module replays, in source order, the
part of `Flow`'s walk (flow.py, flow_classify.py, flow_saves.py) those findings read, with every test an
over-approximation, so that a scope it rejects is one where GF101's `_inspect` returns None for every op.

What it mirrors (the flow keeps one current binding per name, the last in source order; a statement's value
is walked before its targets are bound):
- bindings: assignment and annotated-assignment targets (a name, the names of an unpacking, a dotted
  attribute), `for` and `with ... as` targets, `def` / `class` names, parameters. A binding is an alias of
  the one its value's chain starts from (`Classify.alias_root`: names, view methods and attributes, in-place
  and maybe-alias methods, subscripts; any subscript counts here); it may save its output when its value is a
  call `classify` may mark so (`_may_save_output`).
- saves (`SaveEffects`): the receiver of an input-saving or binary-saving method, the positional arguments of
  a call whose last name is an input-saving function, the first argument of a module call (`self.x(...)` with
  `self.x` built from an input-saving module class in the class, or any call of a name the scope binds), both
  sides of `*`, `/`, `@` and the left of `**` (whatever their kinds).
- escapes: the arguments of container methods (`append`, `update`, ...), the values stored into an attribute
  or a subscript, the elements of a display bound to a name.
- in-place ops: augmented assignments to a name or a subscript, item assignments, calls of in-place methods.

An op under a `with` that surely turns grad off, or bound to no binding, is never reported (`_inspect`'s
first test). Else it may be reported when, for its binding or an earlier binding of the name that a path
through `if` statements may bring to it (`_saved_on_a_skipping_path`), some binding sharing its storage was
made by an op that may save its output, or was saved, at or before the op; or another binding shares the
storage (a live alias); or the storage escaped before it; or the binding is a parameter of a function the
file calls by name other than `forward` (`_saved_at_a_call_site`); or it is bound once, by unpacking a
`chunk` / `split` / `unbind` call (`_multi_view_write`). A scope with a leaf factory (`requires_grad=`,
`.requires_grad_()`, a Parameter) keeps every op (`_leaf_inplace`). `match` bodies are not walked: nor are
they by the flow.

tests/test_prescan_equivalence.py runs the rule on the golden files and constructed cases with and without
this test; bench/same_findings.py compares whole trees.
"""

from __future__ import annotations

import ast

from gradfix.analysis.torchapi import (BINARY_SAVING_METHODS, INPLACE_METHODS, INPLACE_OUTPUT_SAVING_FUNCS,
                                       INPLACE_OUTPUT_SAVING_MODULES, INPUT_SAVING_FUNCS, INPUT_SAVING_METHODS,
                                       INPUT_SAVING_MODULES, MAYBE_ALIAS_METHODS, MODULE_MOVES, MODULE_RETURNING,
                                       MULTI_VIEW_FUNCS, MULTI_VIEW_METHODS,
                                       OUTPUT_SAVING_FUNCS, OUTPUT_SAVING_METHODS, OUTPUT_SAVING_MODULES,
                                       VIEW_ATTRIBUTES, VIEW_METHODS, is_inplace_method)


def _lasts(names) -> frozenset[str]:
    return frozenset(n.rsplit(".", 1)[-1] for n in names)


# last names (a qualname's last part is the code's last name, or the original of an import's `as` name)
_SAVES_OUTPUT_CALLS = _lasts(OUTPUT_SAVING_FUNCS) | _lasts(INPLACE_OUTPUT_SAVING_FUNCS) | OUTPUT_SAVING_METHODS
_SAVES_OUTPUT_MODULES = _lasts(OUTPUT_SAVING_MODULES) | _lasts(INPLACE_OUTPUT_SAVING_MODULES)
_SAVES_INPUT_FUNCS = _lasts(INPUT_SAVING_FUNCS)
_SAVES_INPUT_MODULES = _lasts(INPUT_SAVING_MODULES)
_WRAPPERS = _lasts(MODULE_RETURNING)
_MULTI_VIEW = MULTI_VIEW_METHODS | _lasts(MULTI_VIEW_FUNCS)
_ALIAS_METHODS = VIEW_METHODS | MAYBE_ALIAS_METHODS | {"chunk", "split", "unbind"}
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "put"})
_SEQUENTIAL = frozenset({"Sequential"})
# methods a module's kind and constructor survive: `FileIndex.ctor_of`'s and `classify`'s (a superset of both)
_KEEPS_MODULE = MODULE_MOVES | {"bfloat16", "type", "xpu", "to_empty", "share_memory"}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _All:
    """The set of every name (what a class table is while it is being built)."""

    def __contains__(self, item) -> bool:
        return True


_ALL = _All()


class FileFacts:
    """What the test reads of the whole file: import `as` names, the classes and their attributes, the
    functions called by name, the no_grad test of `with` items. Class tables are built on first use."""

    def __init__(self, tree: ast.Module, ix, surely_no_grad, parameter_names: frozenset[str]):
        self.ix = ix
        self.surely_no_grad = surely_no_grad
        self.parameter_names = parameter_names
        self.original: dict[str, set[str]] = {}     # local `as` name -> the imported names' last parts
        for node in ix.of_type(ast.Import, ast.ImportFrom):
            for a in node.names:
                if a.asname:
                    self.original.setdefault(a.asname, set()).add(a.name.rsplit(".", 1)[-1])
        self.classes: dict[str, list[ast.ClassDef]] = {}
        for node in ix.of_type(ast.ClassDef):
            self.classes.setdefault(node.name, []).append(node)
        self.called: set[str] = set()           # filled by scan (the last names of every call of the file)
        # filled by scan: (node, class of its `self`, last names of its own calls) per scope
        self.scopes: list[tuple[ast.AST, str | None, set[str]]] = []
        self._walks: dict[int, "_Walk"] = {}
        self._attrs: dict[str, tuple[set[str], set[str]]] = {}
        self._returns: dict[str, bool] = {}

    def walk_of(self, node, cls_name: str | None) -> "_Walk":
        walk = self._walks.get(id(node))
        if walk is None:
            walk = self._walks[id(node)] = _Walk(self, cls_name, node)
            walk.block(node.body, False)
        return walk

    def saved_at_a_call(self, fn_name: str) -> bool:
        """Some call whose last name is `fn_name`, with grad possibly on, hands a name whose storage an op
        saved before the call (`_saved_at_a_call_site`, which resolves the call and the argument: a superset)."""
        if fn_name not in self.called:
            return False
        for node, cls_name, calls in self.scopes:
            if fn_name not in calls:
                continue
            walk = self.walk_of(node, cls_name)
            for last, step, args in walk.call_sites:
                if last == fn_name and any(walk.saved_by(b, step) for b in args):
                    return True
        return False

    def named(self, func, names) -> bool:
        """Whether a qualname of `func` may end in one of `names`: an attribute's last part, a name itself or
        the original of an import binding it (`from torch import sigmoid as sg`)."""
        t = type(func)
        if t is ast.Attribute:
            return func.attr in names
        if t is ast.Name:
            return func.id in names or any(n in names for n in self.original.get(func.id, ()))
        return False

    def class_attrs(self, cls_name: str) -> tuple[set[str], set[str]]:
        """(attributes some `self.x = <value>` of the class may make an output-saving module, those it may make
        an input-saving one): supersets of `output_saving_attrs` / `submodules` with an input-saving ctor."""
        found = self._attrs.get(cls_name)
        if found is None:
            out: set[str] = set()
            inp: set[str] = set()
            self._attrs[cls_name] = (_ALL, _ALL)   # a cycle through this class: any attribute may
            for cls in self.classes.get(cls_name, ()):
                for n in self.ix.walk(cls):
                    t = type(n)
                    if (t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign) and n.value is not None:
                        targets = n.targets if t is ast.Assign else [n.target]
                        for tgt in targets:
                            if type(tgt) is ast.Attribute and type(tgt.value) is ast.Name and tgt.value.id == "self":
                                if self.module_saves_output(n.value):
                                    out.add(tgt.attr)
                                if self._saves_input(n.value):
                                    inp.add(tgt.attr)
            found = self._attrs[cls_name] = (out, inp)
        return found

    def _ctor(self, value):
        """The constructor call of `Ctor(...).cuda()` / `weight_norm(Ctor(...))`, or None (`ctor_of`)."""
        for _ in range(8):
            while type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _KEEPS_MODULE:
                value = value.func.value
            if type(value) is not ast.Call:
                return None
            if self.named(value.func, _WRAPPERS) and value.args:
                value = value.args[0]
                continue
            return value
        return None

    def _saves_input(self, value) -> bool:
        call = self._ctor(value)
        return call is not None and self.named(call.func, _SAVES_INPUT_MODULES)

    def module_saves_output(self, value) -> bool:
        """May the module `value` builds keep its output (`output_saves.saves_output`): an activation of
        torchapi's tables, a Sequential whose last layer may, a class of the file whose forward may return one."""
        for _ in range(8):
            call = self._ctor(value)
            if call is None:
                return False
            if self.named(call.func, _SAVES_OUTPUT_MODULES):
                return True
            if type(call.func) is ast.Name and call.func.id in self.classes:
                return self.class_returns_saved(call.func.id)
            if not self.named(call.func, _SEQUENTIAL) or not call.args:
                return False
            value = call.args[-1]
            if type(value) is ast.Starred or call.keywords:
                return False
        return False

    def class_returns_saved(self, name: str) -> bool:
        """May every `return` of the class's own `forward` give an output an op saved (over-approximating
        `output_saves.class_returns_saved_output`; a class being asked about up the stack answers True)."""
        if name in self._returns:
            return self._returns[name]
        self._returns[name] = True
        answer = False
        for cls in self.classes[name]:
            forward = next((s for s in reversed(cls.body) if type(s) in _DEFS and s.name == "forward"), None)
            if forward is not None and self._returns_saved(name, forward):
                answer = True
        self._returns[name] = answer
        return answer

    def _returns_saved(self, cls_name: str, forward) -> bool:
        returns = []
        bound: dict[str, list] = {}
        stack = list(forward.body)
        while stack:
            n = stack.pop()
            t = type(n)
            if t in _DEFS or t is ast.Lambda:
                return False    # a nested scope may rebind names (as output_saves.py answers)
            if t is ast.Return:
                returns.append(n.value)
            elif t is ast.Assign:
                for tgt in n.targets:
                    for x in self.ix.walk(tgt):
                        if type(x) is ast.Name:
                            bound.setdefault(x.id, []).append(n.value if tgt is x else None)
            elif t in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr):
                for x in self.ix.walk(n.target):
                    if type(x) is ast.Name:
                        bound.setdefault(x.id, []).append(None)
            elif t is ast.With or t is ast.AsyncWith:
                for item in n.items:
                    if item.optional_vars is not None:
                        for x in self.ix.walk(item.optional_vars):
                            if type(x) is ast.Name:
                                bound.setdefault(x.id, []).append(None)
            stack.extend(self.ix.children(n))
        if not returns:
            return False
        for value in returns:
            if type(value) is ast.Name:
                values = bound.get(value.id)
                if not values or not all(v is not None and self._saving_value(cls_name, v) for v in values):
                    return False
            elif not self._saving_value(cls_name, value):
                return False
        return True

    def _saving_value(self, cls_name: str, value) -> bool:
        if type(value) is not ast.Call:
            return False
        func = value.func
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self":
            return func.attr in self.class_attrs(cls_name)[0]
        return self.named(func, _SAVES_OUTPUT_CALLS)


class _Binding:
    __slots__ = ("name", "step", "alias", "saves_output", "branch", "multi_view", "last_read", "tensor", "maybe")

    def __init__(self, name, step, alias, saves_output, branch, multi_view=False, tensor=False, maybe=False):
        self.name, self.step, self.alias, self.saves_output = name, step, alias, saves_output
        self.branch, self.multi_view = branch, multi_view
        self.tensor = tensor    # its kind may be TENSOR or PARAMETER, or it is a parameter of unknown type
        self.maybe = maybe      # linked to its alias through `.to()` / `.cpu()` / `.float()` (`maybe_alias`)
        self.last_read = -2     # the last step that reads the name while it holds this binding

    def maybe_alias(self) -> bool:
        b, seen = self, set()
        while b.alias is not None and id(b) not in seen:
            if b.maybe:
                return True
            seen.add(id(b))
            b = b.alias
        return False

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
        self.step = 0
        self.branch: tuple = ()
        self.leafy = False
        self.params: set[str] = set()
        if type(node) is not ast.Module:
            a = node.args
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)):
                self.params.add(p.arg)
                self._bind(p.arg, -1, None, False, tensor=p.arg not in ("self", "cls"))
        self.node = node
        self._assigned: dict[str, list] | None = None

    # -- bindings ----------------------------------------------------------
    def _bind(self, name, step, alias, saves_output, multi_view=False, tensor=False, maybe=False) -> _Binding:
        b = _Binding(name, step, alias, saves_output, self.branch, multi_view, tensor, maybe)
        self.bindings.append(b)
        self.env[name] = b
        return b

    def _root(self, expr) -> _Binding | None:
        """`alias_root`'s binding, or a superset of its answers."""
        return self._link(expr)[0]

    def _link(self, expr) -> tuple[_Binding | None, bool]:
        """(`_root`, whether the chain passes a maybe-alias method: `.cpu()`, `.to()`, `.float()`)."""
        maybe = False
        while True:
            t = type(expr)
            if t is ast.Name:
                return self.env.get(expr.id), maybe
            if t is ast.Call and type(expr.func) is ast.Attribute:
                meth = expr.func.attr
                if meth in _ALIAS_METHODS or meth in INPLACE_METHODS or is_inplace_method(meth):
                    if meth in MAYBE_ALIAS_METHODS and meth not in VIEW_METHODS:
                        maybe = True
                    expr = expr.func.value
                    continue
                return None, maybe
            if t is ast.Attribute:
                dotted = _dotted(expr)
                if dotted is not None and dotted in self.env:
                    return self.env[dotted], maybe
                if expr.attr in VIEW_ATTRIBUTES:
                    expr = expr.value
                    continue
                return None, maybe
            if t is ast.Subscript or t is ast.Starred:
                expr = expr.value
                continue
            return None, maybe

    def _tensor(self, expr) -> bool:
        """Whether `classify(expr)` may give TENSOR or PARAMETER (gradscopes.py `_value_kind`, with names read
        through their bindings)."""
        t = type(expr)
        if t is ast.Name:
            b = self.env.get(expr.id)
            return b is not None and b.tensor
        if t is ast.Call:
            return True
        if t is ast.BinOp:
            return self._tensor(expr.left) or self._tensor(expr.right)
        if t is ast.UnaryOp:
            return self._tensor(expr.operand)
        if t is ast.Subscript:
            return self._tensor(expr.value)
        if t is ast.Attribute:
            return (expr.attr in VIEW_ATTRIBUTES or expr.attr == "grad") and self._tensor(expr.value)
        if t is ast.IfExp:
            return self._tensor(expr.body) and self._tensor(expr.orelse)
        return False

    def _may_save_output(self, value) -> bool:
        """Whether `classify(value)` may say "saves its output" (only a call can)."""
        if type(value) is not ast.Call:
            return False
        func = value.func
        facts = self.facts
        if type(func) is ast.Attribute:
            if type(func.value) is ast.Name and func.value.id == "self":
                return self.cls_name is None or func.attr in facts.class_attrs(self.cls_name)[0]
            return func.attr in _SAVES_OUTPUT_CALLS
        if type(func) is ast.Name:
            return facts.named(func, _SAVES_OUTPUT_CALLS) or self._module_name(func.id, True)
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
                if facts.named(value, _SAVES_OUTPUT_MODULES if output else _SAVES_INPUT_MODULES):
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
            params = type(it) is ast.Call and type(it.func) is ast.Attribute and it.func.attr in ("parameters", "buffers")
            if params and type(stmt.target) is ast.Name:
                self._bind(stmt.target.id, self.step, None, False, tensor=True)     # Kind.PARAMETER
            else:
                self._bind_target(stmt.target)
            self.step += 1
            self.block(stmt.body, no_grad)
            self.block(stmt.orelse, no_grad)
        elif t is ast.While:
            self._expr(stmt.test, no_grad)
            self.step += 1
            self.block(stmt.body, no_grad)
            self.block(stmt.orelse, no_grad)
        elif t is ast.With or t is ast.AsyncWith:
            for item in stmt.items:
                self._expr(item.context_expr, no_grad)
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars)
            self.step += 1
            self.block(stmt.body, self._with_no_grad(stmt, no_grad))
        elif t is ast.Try or t.__name__ == "TryStar":
            self.block(stmt.body, no_grad)
            for h in stmt.handlers:
                self.block(h.body, no_grad)
            self.block(stmt.orelse, no_grad)
            self.block(stmt.finalbody, no_grad)
        elif t in _DEFS or t is ast.ClassDef:
            self._bind(stmt.name, self.step, None, False)
        elif t is ast.Match:
            self._expr(stmt.subject, no_grad)
            self.step += 1
        else:
            self._small(stmt, no_grad)
            self.step += 1

    def _with_no_grad(self, stmt, outer: bool) -> bool:
        """Grad surely off in the body: the first item is a call that surely resolves to a no_grad context,
        or grad was off and every item is such a call (anything else might turn grad back on)."""
        surely = [type(i.context_expr) is ast.Call and self.facts.surely_no_grad(_dotted(i.context_expr.func))
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

    def _bind_target(self, target) -> None:
        t = type(target)
        if t is ast.Name:
            self._bind(target.id, self.step, None, False)
        elif t is ast.Tuple or t is ast.List:
            for el in target.elts:
                self._bind_target(el.value if type(el) is ast.Starred else el)

    def _assign(self, target, value, no_grad: bool) -> None:
        t = type(target)
        if t is ast.Name:
            alias, maybe = self._link(value)
            self._bind(target.id, self.step, alias, self._may_save_output(value), self._multi_view(value),
                       self._tensor(value), maybe)
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
            alias, maybe = self._link(value)
            multi = self._multi_view(value)
            tensor = self._tensor(value)
            for el in target.elts:
                tg = el.value if type(el) is ast.Starred else el
                if type(tg) is ast.Name:
                    self._bind(tg.id, self.step, alias, False, multi, tensor, maybe)
                elif type(tg) not in (ast.Tuple, ast.List):
                    self._assign(tg, value, no_grad)
        elif t is ast.Attribute:
            self._expr(target.value, no_grad)
            self._escape(value)
            dotted = _dotted(target)
            if dotted is not None:
                alias, maybe = self._link(value)
                self._bind(dotted, self.step, alias, False, tensor=self._tensor(value), maybe=maybe)
        elif t is ast.Subscript:
            self._expr(target, no_grad)
            self._escape(value)
            self._event(self._root(target.value), no_grad)

    def _escape(self, expr) -> None:
        b = self._root(expr)
        if b is not None:
            self.escapes.append((b, self.step))

    def _save(self, expr) -> None:
        b = self._root(expr)
        if b is not None and b.tensor:      # `_save` records only a tensor's (or an unknown parameter's) root
            self.saves.append((b, self.step, self.branch))

    def _event(self, b, no_grad: bool) -> None:
        if b is not None and not no_grad:
            self.events.append((self.step, b, self.branch))

    # -- expressions (flow.py `_expr`, flow_saves.py) ---------------------------
    def _expr(self, expr, no_grad: bool) -> None:
        facts = self.facts
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
                        self._save(node.left)
                elif op is ast.MatMult or (op is ast.Mult and self._tensor(node.left) and self._tensor(node.right)) \
                        or (op is ast.Div and self._tensor(node.right)):
                    self._save(node.left)
                    self._save(node.right)
            stack.extend(facts.ix.children(node))

    def _call(self, call: ast.Call, no_grad: bool) -> None:
        func = call.func
        facts = self.facts
        last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if any(k.arg == "requires_grad" for k in call.keywords) or last == "requires_grad_" or \
                last in facts.parameter_names:
            self.leafy = True
        first = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
        if last is not None and not no_grad:
            passed = [self.env.get(a.id) for a in (*call.args, *(k.value for k in call.keywords)) if type(a) is ast.Name]
            if passed:
                self.call_sites.append((last, self.step, [b for b in passed if b is not None]))
        if type(func) is ast.Attribute:
            meth = func.attr
            if meth in INPLACE_METHODS or is_inplace_method(meth):
                self._event(self._root(func.value), no_grad)
            recv = func.value
            if self._tensor(recv) or (type(recv) is ast.Name and recv.id in self.params):
                if meth in INPUT_SAVING_METHODS:
                    self._save(recv)
                elif meth in BINARY_SAVING_METHODS and first is not None and self._tensor(first):
                    self._save(recv)
                    self._save(first)
            if meth in _CONTAINER_METHODS:
                for arg in call.args:
                    self._escape(arg)
                for k in call.keywords:
                    self._escape(k.value)
            if type(func.value) is ast.Name and func.value.id == "self" and first is not None and (
                    self.cls_name is None or meth in facts.class_attrs(self.cls_name)[1]):
                self._save(first)       # `self.fc(x)`: a Linear saves its input
        elif type(func) is ast.Name and first is not None and self._module_name(func.id, False):
            self._save(first)           # `fc(x)` with `fc` a module the scope binds
        if facts.named(func, _SAVES_INPUT_FUNCS):
            for arg in call.args:
                self._save(arg)

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
            return any(i <= step and not any(cid in skipped for cid, _k in branch) for i, branch in saves.get(r, ())) \
                or any(m.saves_output and 0 <= m.step <= step and not any(cid in skipped for cid, _k in m.branch)
                       for m in by_root[r])
        return any(i <= step for i, _branch in saves.get(r, ())) or \
            any(m.saves_output and 0 <= m.step <= step for m in by_root[r])

    def may_show(self, fn_name: str | None) -> bool:
        if not self.events:
            return False
        if self.leafy:
            return True
        by_root, _saves, escaped_at = self._groups()
        by_name: dict[str, list[_Binding]] = {}
        for b in self.bindings:
            by_name.setdefault(b.name, []).append(b)
        caller = None      # a call site of the function handing a saved tensor (computed once, if asked)
        for step, b, branch in self.events:
            same_name = by_name[b.name]
            if len(same_name) == 1 and b.multi_view:
                return True                 # `_multi_view_write`
            if b.tensor:                    # `flow.is_tensor(binding)`: `_inspect`'s own tests
                r = id(b.root())
                if self.saved_by(b, step) or escaped_at.get(r, step) < step:
                    return True
                if not b.maybe_alias() and any(m is not b and m.step < step < m.last_read and not m.maybe_alias()
                                               for m in by_root[r]):
                    return True             # another holder of the storage is read after the op (`live_aliases`)
                if b.step < 0 and fn_name is not None and fn_name != "forward":
                    if caller is None:
                        caller = self.facts.saved_at_a_call(fn_name)
                    if caller:
                        return True         # `_saved_at_a_call_site`
            # `_saved_on_a_skipping_path`: an earlier binding that reaches the op when `if`s rebinding the name do
            # not run; saves inside those `if`s do not count (`reaching`'s `skipped` for it: the chains of the
            # bindings passed before its own chain)
            inside = dict(branch)
            skipped: set[int] = set()
            seen: dict[int, frozenset] = {}
            for c in reversed([o for o in same_name if o.step < step or o is b]):
                if any(inside.get(cid, k) != k for cid, k in c.branch):
                    continue                # in another branch of an `if` the op is in (`flow.exclusive`)
                outer = next((cid for cid, k in c.branch if cid not in inside), None)
                if outer is None:
                    own = frozenset(skipped)
                else:
                    if outer not in seen:
                        seen[outer] = frozenset(skipped)
                        skipped.add(outer)
                    own = seen[outer]
                if c is not b and c.tensor and own and self.saved_by(c, step, own):
                    return True
                if outer is None:
                    break                   # this binding surely ran before the op: earlier ones do not reach it
        return False


def _dotted(expr) -> str | None:
    parts: list[str] = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _parallel_pairs(target, value, ix):
    """flow.py `_parallel_pairs`: `a, b = x, y` assigned position by position."""
    if type(value) not in (ast.Tuple, ast.List) or len(target.elts) != len(value.elts):
        return None
    if any(type(e) is ast.Starred for e in (*target.elts, *value.elts)):
        return None
    if not all(type(e) is ast.Name for e in target.elts):
        return None
    names = {e.id for e in target.elts}
    if any(type(n) is ast.Name and n.id in names for v in value.elts for n in ix.walk(v)):
        return None
    return list(zip(target.elts, value.elts))


def may_show(facts: FileFacts, node, cls_name: str | None) -> bool:
    """Whether GF101 may report an in-place op of the scope `node` (a function or the module)."""
    return facts.walk_of(node, cls_name).may_show(None if type(node) is ast.Module else node.name)
