"""Per-file facts: imports, nn.Module classes, top-level functions, submodule types."""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, PositionProvider

from gradfix.analysis import torchapi
from gradfix.analysis.gradscopes import is_initialiser
from gradfix.analysis.names import ImportMap, qualname
from gradfix.analysis.tree import active, children, concrete, index_tree, preorder_spans, walk

_STATEMENT_CONTAINERS = concrete(cst.BaseCompoundStatement, cst.IndentedBlock, cst.Else, cst.ExceptHandler,
                                 cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


_MOVES = torchapi.MODULE_MOVES


def strip_moves(expr):
    """`Ctor(...)` of `Ctor(...).cuda().train()`: calls that return the module they are called on."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _MOVES:
        expr = expr.func.value
    return expr


class FileIndex:
    """Facts about one parsed file, computed lazily and shared by all rules."""

    def __init__(self, wrapper: cst.MetadataWrapper, source: str | None = None, py_tree: ast.Module | None = None,
                 tables: tuple[dict, dict] | None = None, reuse=None, project=None, factories: dict | None = None):
        self.wrapper = wrapper
        # a ProjectView (analysis/project.py): the other files of the run, or None
        self.project = project
        self.module = wrapper.module
        self.source = source
        self._py_tree = py_tree
        # one traversal gives children and parents (or the incremental parser kept them);
        # rules run with `tree.active(self.children)`
        self.children, self.parents = tables[:2] if tables is not None else index_tree(self.module)
        with active(self.children):
            self.imports = ImportMap(self.module, project.package if project is not None else None)
        self._flows: dict[int, object] = {}
        # an IncrementalParser: its flows of unchanged functions are reused when the
        # file-level facts a Flow reads (imports, module classes, submodules) are the same
        self._reuse = reuse
        self._preorder = tables[2] if tables is not None and len(tables) > 2 else None
        self._statement_positions: dict[tuple, tuple] = reuse.positions if reuse is not None else {}
        self._memo: dict[str, object] = {}
        if factories is not None and project is not None:
            # the file's own summary (analysis/summary.py `summarise`, made from this text with the
            # view's package) holds what `_own_factories` computes: no CPython tree needed for it
            self.__dict__["_own_factories"] = factories

    def memo(self, key: str, compute):
        """A fact derived from the whole file (its training iterations, its calls), computed once
        per version. Kept on the index, so it goes with it: a module-level cache keyed weakly by
        the index leaked every version, because the cached facts point back at the index."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def release(self) -> None:
        """Break this version's reference cycles (its flows and cached facts point back at it) so
        that its trees are freed as soon as nothing uses them, without waiting for the cyclic
        collector, which a long-lived server runs rarely. Flows handed to the incremental parser
        are kept (the next version re-points them at its own index)."""
        kept = self._reuse.flows.values() if self._reuse is not None else ()
        kept_ids = {id(f) for f in kept}
        for flow in self._flows.values():
            if id(flow) not in kept_ids:
                flow.discard()
        self._flows = {}
        self._memo = {}
        self._reuse = None  # the parser holds the kept flows, which point at this index

    def preorder(self):
        """For each node, the pre-order list holding its subtree and the slice (built on first use,
        or kept per top-level statement by the incremental parser)."""
        if self._preorder is None:
            self._preorder = preorder_spans(self.module, self.children)[1]
        return self._preorder

    @cached_property
    def text(self) -> str:
        """The file's source text (generated only when the engine did not pass it)."""
        return self.source if self.source is not None else self.module.code

    @cached_property
    def positions(self):
        """Every node's position (a code generation of the whole file with position tracking)."""
        return self.wrapper.resolve(PositionProvider)

    def position(self, node: cst.CSTNode) -> CodeRange:
        """One node's position, paying only for its own line or top-level statement: libcst's
        position pass over a 2,000-line file took longer than all the rules together."""
        line = node
        while line is not None and not isinstance(line, cst.SimpleStatementLine):
            line = self.parents.get(line)
        anchor = self._single_lines.get(id(line)) if line is not None and line is not node else None
        if anchor is not None:
            # a one-line statement: generate just that line and shift it to its place
            lineno, col = anchor
            table, offset = self._positions_of(line), lineno - len(line.leading_lines) - 1
            r = table[node]
            own = len(line.leading_lines) + 1  # the statement's own row in the generated text
            if r.start.line == own:
                end_col = r.end.column + col if r.end.line == own else r.end.column
                return CodeRange(CodePosition(r.start.line + offset, r.start.column + col),
                                 CodePosition(r.end.line + offset, end_col))
        stmt = node
        while stmt is not None and self.parents.get(stmt) is not self.module:
            stmt = self.parents.get(stmt)
        starts = self._statement_starts
        if stmt is None or starts is None:
            return self.positions[node]
        table, offset = self._positions_of(stmt), starts[id(stmt)] - 1
        r = table[node]
        return CodeRange(CodePosition(r.start.line + offset, r.start.column),
                         CodePosition(r.end.line + offset, r.end.column))

    def _positions_of(self, stmt: cst.CSTNode):
        """Positions inside one statement, generated alone (rows from its first leading line).
        The incremental parser keeps them for the statements an edit did not touch."""
        key = (id(stmt), self.module.default_indent, self.module.default_newline)
        hit = self._statement_positions.get(key)
        if hit is not None and hit[0] is stmt:
            return hit[1]
        sub = self.module.with_changes(body=[stmt], header=[], footer=[])
        table = cst.MetadataWrapper(sub, unsafe_skip_copy=True).resolve(PositionProvider)
        self._statement_positions[key] = (stmt, table)
        return table

    @cached_property
    def _ast_body(self) -> list | None:
        if self._py_tree is not None:
            return self._py_tree.body
        if self.source is None:
            return None
        try:
            return ast.parse(self.source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def _single_lines(self) -> dict[int, tuple[int, int]]:
        """(line, column) of every simple statement line that fits on one physical line,
        found by walking libcst's and CPython's statement lists side by side."""
        found: dict[int, tuple[int, int]] = {}
        body = self._ast_body
        if body is None:
            return found

        def pair(cst_body, ast_body) -> None:
            k = 0
            for stmt in cst_body:
                if k >= len(ast_body):
                    return
                if isinstance(stmt, cst.SimpleStatementLine):
                    n = len(stmt.body)
                    first, last = ast_body[k], ast_body[min(k + n, len(ast_body)) - 1]
                    if first.lineno == getattr(last, "end_lineno", None):
                        found[id(stmt)] = (first.lineno, first.col_offset)
                    k += n
                    continue
                a = ast_body[k]
                k += 1
                inner = getattr(stmt, "body", None)
                if isinstance(inner, cst.IndentedBlock) and hasattr(a, "body"):
                    pair(inner.body, a.body)
                orelse = getattr(stmt, "orelse", None)
                if isinstance(orelse, cst.If):
                    pair([orelse], getattr(a, "orelse", []))
                elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                    pair(orelse.body.body, getattr(a, "orelse", []))
                if isinstance(stmt, cst.Try) and isinstance(a, ast.Try):
                    for h, ah in zip(stmt.handlers, a.handlers):
                        if isinstance(h.body, cst.IndentedBlock):
                            pair(h.body.body, ah.body)
                    if stmt.finalbody is not None and isinstance(stmt.finalbody.body, cst.IndentedBlock):
                        pair(stmt.finalbody.body.body, a.finalbody)

        pair(self.module.body, body)
        return found

    @cached_property
    def _statement_starts(self) -> dict[int, int] | None:
        """First line (leading blank and comment lines included) of each top-level statement,
        from CPython's parser; None when the two parsers' statements do not line up."""
        body = self._ast_body
        if body is None:
            return None
        starts: dict[int, int] = {}
        k = 0
        for stmt in self.module.body:
            count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            if k >= len(body):
                return None
            node = body[k]
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            starts[id(stmt)] = first - len(stmt.leading_lines)
            k += count
        return starts if k == len(body) else None

    # -- structure -------------------------------------------------------
    @cached_property
    def classes(self) -> dict[str, cst.ClassDef]:
        return {n.name.value: n for n in self.module.body if isinstance(n, cst.ClassDef)}

    def defined_after(self, cname: str, *nodes: cst.CSTNode | None) -> bool:
        """Whether `classes[cname]` (the file's last definition of the class) comes after the top-level
        statement holding one of `nodes`: in a notebook or script redefining a class, the class live at a
        cell is the last definition in the cells before it, not a later one."""
        cls = self.classes.get(cname)
        if cls is None:
            return False
        order = self.memo("fileindex.top_order", lambda: {id(st): i for i, st in enumerate(self.module.body)})
        at = order.get(id(cls))
        for node in nodes:
            cur = node
            while cur is not None and id(cur) not in order:
                cur = self.parents.get(cur)
            if cur is not None and at is not None and order[id(cur)] < at:
                return True
        return False

    @cached_property
    def functions(self) -> dict[str, cst.FunctionDef]:
        return {n.name.value: n for n in self.module.body if isinstance(n, cst.FunctionDef)}

    @cached_property
    def module_classes(self) -> set[str]:
        """Classes in this file that subclass nn.Module (directly or through each other)."""
        result: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, cls in self.classes.items():
                if name in result:
                    continue
                for base in cls.bases:
                    q = qualname(base.value, self.imports)
                    if q is None:
                        continue
                    if torchapi.is_nn_module_ctor(q) or q == "torch.nn.Module" or q in result \
                            or self._project_module(q):
                        result.add(name)
                        changed = True
                        break
        return result

    def method(self, cls: "cst.ClassDef | str | None", name: str) -> cst.FunctionDef | None:
        """The method `name` a class of the file defines (the last definition, as Python binds it)."""
        node = self.classes.get(cls) if isinstance(cls, str) else cls
        found = None
        if node is not None:
            for stmt in node.body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                    found = stmt
        return found

    def is_module_ctor(self, q: str | None) -> bool:
        return torchapi.is_nn_module_ctor(q) or (q is not None and (q in self.module_classes or self._project_module(q)))

    def _project_module(self, q: str) -> bool:
        """A class another file of the project defines as an nn.Module subclass."""
        return self.project is not None and "." in q and self.project.is_module_class(q) is True

    @cached_property
    def _own_factories(self) -> dict:
        """analysis/returns.py on this file's own tree: top-level function -> what it returns on
        every path (for those shown)."""
        from gradfix.analysis.summary import import_table, qualifier
        from gradfix.analysis.returns import file_returns

        body = self._ast_body
        if body is None:
            return {}
        # the file's own tree when there is one: its walk (analysis/astindex.py) is made once per tree
        tree = self._py_tree if self._py_tree is not None else ast.Module(body=body, type_ignores=[])
        package = self.project.package if self.project is not None else None
        return file_returns(tree, qualifier(import_table(tree, package)))[0]

    def module_factory(self, q: str | None) -> tuple | None:
        """What the function `q` returns (one analysis.returns.Returned per return) when it is a
        function of this file or of the project that returns an nn.Module on every path: a torch
        module, a module class, or what another such function returns. None otherwise (a library
        function, a path that may return something else or fall off the end)."""
        if not q:
            return None
        memo = self._memo.setdefault("fileindex.module_factory", {})
        if q in memo:
            return memo[q]
        memo[q] = None  # recursion guard: a cycle of factories is unknown
        from gradfix.analysis.returns import Returned

        result = None
        own = self._own_factories.get(q) if q in self.functions else None
        if own is not None:
            out: list | None = []
            for r in own:
                if self.is_module_ctor(r.ctor):
                    out.append(r)
                    continue
                inner = self.module_factory(r.ctor)
                if inner is None:
                    out = None
                    break
                heads = {i.head for i in inner}
                out.append(Returned(r.ctor, heads.pop() if len(heads) == 1 else None))
            result = tuple(out) if out else None
        elif self.project is not None and "." in q:
            result = self.project.module_factory(q)
        memo[q] = result
        return result

    def forward_numbers(self, q: str | None) -> frozenset[int]:
        """The positions of the tuple that module class `q` (of this file or of the project) returns from
        `forward` holding Python numbers or lists of them (analysis/returns.py); empty when none is shown."""
        if not q:
            return frozenset()
        if q in self.module_classes:
            from gradfix.analysis.returns import forward_numbers

            memo = self._memo.get("fileindex.forward_numbers")
            if memo is None:
                body = self._ast_body
                memo = self._memo["fileindex.forward_numbers"] = \
                    forward_numbers(ast.Module(body=body, type_ignores=[])) if body is not None else {}
            return frozenset(memo.get(q, ()))
        if self.project is not None and "." in q:
            return self.project.forward_numbers(q)
        return frozenset()

    def parameter_free_project_class(self, q: str | None) -> bool:
        """A module class another file of the project defines that creates no parameter, buffer or
        submodule (nor do its bases): a dropout or pooling wrapper."""
        return self.project is not None and q is not None and "." in q and self.project.parameter_free(q) is True


    @cached_property
    def submodules(self) -> dict[str, dict[str, str]]:
        """class name -> {attr: constructor qualname} from `self.attr = Ctor(...)` in __init__."""
        table: dict[str, dict[str, str]] = {}
        for cname in self.module_classes:
            attrs: dict[str, str] = {}
            for stmt in self.classes[cname].body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                    for node in walk(stmt.body):
                        if isinstance(node, cst.Assign) and len(node.targets) == 1:
                            target = node.targets[0].target
                            if (
                                isinstance(target, cst.Attribute)
                                and isinstance(target.value, cst.Name)
                                and target.value.value == "self"
                            ):
                                ctor = self.ctor_of(node.value)
                                if ctor:
                                    attrs[target.attr.value] = ctor
            table[cname] = attrs
        return table

    @cached_property
    def output_saving_submodules(self) -> dict[str, frozenset[str]]:
        """class name -> the attributes set in __init__ to a module that keeps its output for backward
        (see `module_saves_output`): `self.body = nn.Sequential(nn.Conv2d(...), nn.ReLU())`."""
        table: dict[str, frozenset[str]] = {}
        for cname in self.module_classes:
            attrs: set[str] = set()
            for stmt in self.classes[cname].body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                    for node in walk(stmt.body):
                        if isinstance(node, cst.Assign) and len(node.targets) == 1:
                            target = node.targets[0].target
                            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                                    and target.value.value == "self" and self.module_saves_output(node.value):
                                attrs.add(target.attr.value)
            table[cname] = frozenset(attrs)
        return table

    def module_saves_output(self, expr: cst.BaseExpression | None) -> bool:
        """Whether the module `expr` builds keeps its output for backward, so that an in-place op on
        what it returns breaks backward: `nn.ReLU()`, `nn.Sigmoid()`, `nn.LeakyReLU(inplace=True)`
        (torchapi's tables), an `nn.Sequential(...)` whose last layer is one, or a module class of this
        file whose forward returns such an output (analysis/output_saves.py)."""
        from gradfix.analysis.output_saves import saves_output  # it reads this index
        return saves_output(self, expr)

    def ctor_of(self, expr: cst.BaseExpression) -> str | None:
        """Qualified constructor name of `Ctor(...)`, seeing through `.cuda()`, `.to(...)`, `.train()`."""
        expr = strip_moves(expr)
        if isinstance(expr, cst.Call):
            q = qualname(expr.func, self.imports)
            if q in torchapi.MODULE_RETURNING and expr.args and expr.args[0].keyword is None:
                return self.ctor_of(expr.args[0].value)  # `weight_norm(nn.Conv2d(...))` is the Conv2d
            if q is not None:
                return q
        return None

    # -- context ---------------------------------------------------------
    def enclosing(self, node: cst.CSTNode, kinds: tuple[type, ...]) -> cst.CSTNode | None:
        cur = self.parents.get(node)
        while cur is not None:
            if isinstance(cur, kinds):
                return cur
            cur = self.parents.get(cur)
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        return self.enclosing(node, (cst.ClassDef,))  # type: ignore[return-value]

    def grad_mode_of_with(self, with_node: cst.With) -> bool | None:
        """False for `with torch.no_grad()` (inference_mode, `set_grad_enabled(False)`), True for
        `torch.enable_grad()` / `set_grad_enabled(True)` (gradients on again inside no_grad), None
        when the statement does not set the grad mode."""
        for item in with_node.items:
            expr = item.item
            if isinstance(expr, cst.Call):
                q = qualname(expr.func, self.imports)
                if q in torchapi.NO_GRAD_CONTEXTS:
                    return False
                if q in ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"):
                    return True
                if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and expr.args:
                    v = expr.args[0].value
                    if isinstance(v, cst.Name) and v.value in ("True", "False"):
                        return v.value == "True"
        return None

    def is_no_grad_with(self, with_node: cst.With) -> bool:
        return self.grad_mode_of_with(with_node) is False

    def is_no_grad_function(self, fn: cst.FunctionDef) -> bool:
        for dec in fn.decorators:
            expr = dec.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if qualname(expr, self.imports) in torchapi.NO_GRAD_CONTEXTS:
                return True
        return False

    def under_no_grad(self, node: cst.CSTNode) -> bool:
        cur = self.parents.get(node)
        while cur is not None:
            if isinstance(cur, cst.With) and self.is_no_grad_with(cur):
                return True
            if isinstance(cur, cst.FunctionDef):
                if self.is_no_grad_function(cur):
                    return True
            cur = self.parents.get(cur)
        return False

    def training_code_flows(self):
        """Flows of the module body and of every function that may run with grad enabled, except
        initialisers (`__init__`, `reset_parameters`, ...), where in-place updates of fresh
        tensors are the norm."""
        for scope in self.scopes():
            if isinstance(scope, cst.FunctionDef) and (is_initialiser(scope.name.value)
                                                       or not self.grad_enabled(scope)):
                continue
            yield self.flow(scope)

    # -- call graph and provenance (callgraph.py, provenance.py) ------------
    @property
    def callgraph(self):
        from gradfix.analysis.callgraph import CallGraph

        return self.memo("callgraph", lambda: CallGraph(self))

    def param_grad(self, fn: cst.FunctionDef, name: str) -> bool | None:
        return self.callgraph.param_grad(fn, name)

    def grad_enabled(self, fn: cst.FunctionDef | None) -> bool:
        return self.callgraph.grad_enabled(fn)

    def class_parameters(self, cls_name: str | None) -> frozenset:
        """Attributes a module class of the file makes parameters: `self.w = nn.Parameter(...)`,
        `self.register_parameter("w", ...)`."""
        def compute():
            table = {}
            for cname in self.module_classes:
                found = set()
                for node in walk(self.classes[cname]):
                    kind = type(node)   # no subclasses (tests/test_tree.py): `is` is isinstance here
                    if kind is cst.Assign and len(node.targets) == 1:
                        t = node.targets[0].target
                        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" \
                                and isinstance(node.value, cst.Call) and \
                                qualname(node.value.func, self.imports) in ("torch.nn.Parameter",
                                                                            "torch.nn.parameter.Parameter"):
                            found.add(t.attr.value)
                    elif kind is cst.Call and isinstance(node.func, cst.Attribute) and \
                            node.func.attr.value == "register_parameter" and node.args and \
                            isinstance(node.args[0].value, cst.SimpleString):
                        found.add(node.args[0].value.evaluated_value)
                table[cname] = frozenset(found)
            return table
        return self.memo("class_parameters", compute).get(cls_name, frozenset())

    def flow(self, scope: cst.CSTNode):
        """The Flow of a FunctionDef or of the Module body (cached)."""
        from gradfix.analysis.flow import Flow

        key = id(scope)
        if key not in self._flows:
            kept = self._reused_flow(scope)
            self._flows[key] = kept if kept is not None else Flow(self, scope)
        return self._flows[key]

    @cached_property
    def flow_facts(self) -> tuple:
        """What a function's Flow reads from the rest of the file."""
        project = () if self.project is None else self.project.facts(set(self.imports.aliases.values()))
        return (tuple(sorted(self.imports.aliases.items())), tuple(sorted(self.module_classes)),
                tuple(sorted((c, tuple(sorted(a.items()))) for c, a in self.submodules.items())), project,
                tuple(sorted(f for f in self.functions if self.module_factory(f) is not None)))

    def _reused_flow(self, scope: cst.CSTNode):
        reuse = self._reuse
        if reuse is None or not isinstance(scope, cst.FunctionDef) or reuse.flow_facts != self.flow_facts:
            return None
        kept = reuse.flows.get(id(scope))
        if kept is None or kept.scope is not scope:
            return None
        kept.index = self  # positions and parents must come from this version of the file
        return kept

    def keep_flows(self) -> None:
        """Hand this version's function flows to the incremental parser for the next version."""
        if self._reuse is not None:
            previous = self._reuse.flows
            self._reuse.flows = {k: f for k, f in self._flows.items() if isinstance(f.scope, cst.FunctionDef)}
            carried = {id(f) for f in self._reuse.flows.values()}
            for flow in previous.values():
                if id(flow) not in carried:
                    flow.discard()  # its function changed or went: no later version will reuse it
            self._reuse.flow_facts = self.flow_facts
            parents = self.parents
            self._reuse.positions = {k: v for k, v in self._statement_positions.items() if v[0] in parents}

    def scopes(self) -> list[cst.CSTNode]:
        """The module and every function (methods included), outermost first."""
        return self._scopes

    @cached_property
    def _scopes(self) -> list[cst.CSTNode]:
        # functions sit only in statement bodies: walk statements, never expressions
        found: list[cst.CSTNode] = [self.module]
        stack = list(reversed(self.module.body))
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is cst.FunctionDef:
                found.append(node)
            if kind in _STATEMENT_CONTAINERS:
                stack.extend(reversed([c for c in children(node) if type(c) in _STATEMENT_CONTAINERS]))
        return found

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


def inplace_flag(call: cst.Call, position: int) -> bool:
    """`inplace=True`, or `True` at the `inplace` position (-1: the op is in place by name, `F.elu_`)."""
    if position < 0:
        return True
    for i, a in enumerate(call.args):
        if a.star:
            return False
        if (a.keyword is not None and a.keyword.value == "inplace") or (a.keyword is None and i == position):
            return isinstance(a.value, cst.Name) and a.value.value == "True"
    return False
