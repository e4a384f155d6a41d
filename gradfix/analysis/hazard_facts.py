"""The file-level facts GF101's pre-pass test reads (analysis/inplace_hazards.py), on CPython's tree: what
the imports bind, and per class of the file which attributes may be modules that save their input or
output, parameters or submodules, and whether its `forward` may return a saved output. Each is a superset of
the libcst-side table it stands for (fileindex.py, output_saves.py), built on first use."""

from __future__ import annotations

import ast

from gradfix.analysis.torchapi import (INPLACE_OUTPUT_SAVING_FUNCS, INPLACE_OUTPUT_SAVING_MODULES, INPUT_SAVING_MODULES,
                                       MODULE_IF_GIVEN_ONE, MODULE_MOVES, MODULE_RETURNING, OUTPUT_SAVING_FUNCS, OUTPUT_SAVING_METHODS,
                                       OUTPUT_SAVING_MODULES)


def lasts(names) -> frozenset[str]:
    return frozenset(n.rsplit(".", 1)[-1] for n in names)


# last names (a qualname's last part is the code's last name, or the original of an import's `as` name)
SAVES_OUTPUT_CALLS = lasts(OUTPUT_SAVING_FUNCS) | lasts(INPLACE_OUTPUT_SAVING_FUNCS) | OUTPUT_SAVING_METHODS
SAVES_OUTPUT_MODULES = lasts(OUTPUT_SAVING_MODULES) | lasts(INPLACE_OUTPUT_SAVING_MODULES)
SAVES_INPUT_MODULES = lasts(INPUT_SAVING_MODULES)
_WRAPPERS = lasts(MODULE_RETURNING) | lasts(MODULE_IF_GIVEN_ONE)   # `torch.compile(nn.Sigmoid())` too
_SEQUENTIAL = frozenset({"Sequential"})
# methods a module's kind and constructor survive: `FileIndex.ctor_of`'s and `classify`'s (a superset of both)
_KEEPS_MODULE = MODULE_MOVES | {"bfloat16", "type", "xpu", "to_empty", "share_memory"}
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


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
        # local name -> the qualified names imports bind it to (names.py `ImportMap`; relative imports, which
        # never resolve to torch, are left out, as are star imports, which `resolve` does not read)
        self.imports: dict[str, set[str]] = {}
        for node in ix.of_type(ast.Import, ast.ImportFrom):
            for a in node.names:
                if a.asname:
                    self.original.setdefault(a.asname, set()).add(a.name.rsplit(".", 1)[-1])
                if type(node) is ast.Import:
                    local = a.asname or a.name.split(".")[0]
                    self.imports.setdefault(local, set()).add(a.name if a.asname else local)
                elif a.name != "*" and node.module and not node.level:
                    self.imports.setdefault(a.asname or a.name, set()).add(f"{node.module}.{a.name}")
        self.classes: dict[str, list[ast.ClassDef]] = {}
        for node in ix.of_type(ast.ClassDef):
            self.classes.setdefault(node.name, []).append(node)
        self.called: set[str] = set()           # filled by scan (the last names of every call of the file)
        # filled by scan: (node, class of its `self`, last names of its own calls) per scope
        self.scopes: list[tuple[ast.AST, str | None, set[str]]] = []
        self.walks: dict[int, object] = {}     # inplace_hazards.py `walk_of`: one replay per scope
        self._attrs: dict[str, tuple[set[str], set[str]]] = {}
        self._params: dict[str, set[str]] = {}
        self._called_attrs: dict[str, set[str]] = {}
        self._returns: dict[str, bool] = {}

    def named(self, func, names) -> bool:
        """Whether a qualname of `func` may end in one of `names`: an attribute's last part, a name itself or
        the original of an import binding it (`from torch import sigmoid as sg`)."""
        t = type(func)
        if t is ast.Attribute:
            return func.attr in names
        if t is ast.Name:
            return func.id in names or any(n in names for n in self.original.get(func.id, ()))
        return False

    def qualnames(self, func) -> list[str | None]:
        """What `qualname(func, imports)` may be: the dotted name through each import binding its first name."""
        dotted = dotted_name(func)
        if dotted is None:
            return [None]
        root, _, rest = dotted.partition(".")
        fulls = self.imports.get(root)
        if not fulls:
            return [dotted]
        return [f"{full}.{rest}" if rest else full for full in fulls]

    def class_parameters(self, cls_name: str) -> set[str]:
        """Attributes the class may make parameters (`FileIndex.class_parameters`: `self.w = nn.Parameter(...)`,
        `self.register_parameter("w", ...)`), by the callee's last name."""
        found = self._params.get(cls_name)
        if found is None:
            found = self._params[cls_name] = set()
            for cls in self.classes.get(cls_name, ()):
                for n in self.ix.walk(cls):
                    t = type(n)
                    if t is ast.Assign and len(n.targets) == 1 and type(n.value) is ast.Call:
                        tgt = n.targets[0]
                        if type(tgt) is ast.Attribute and type(tgt.value) is ast.Name and tgt.value.id == "self" \
                                and self.named(n.value.func, self.parameter_names):
                            found.add(tgt.attr)
                    elif t is ast.Call and type(n.func) is ast.Attribute and n.func.attr == "register_parameter":
                        found.update(registered_names(n))
        return found

    def class_attrs_called(self, cls_name: str) -> set[str]:
        """Attributes some `self.x = <call>` of the class assigns (moves stripped): a superset of the submodules
        `FileIndex.submodules` records (their constructor is what `ctor_of` finds on a call)."""
        found = self._called_attrs.get(cls_name)
        if found is None:
            found = self._called_attrs[cls_name] = set()
            for cls in self.classes.get(cls_name, ()):
                for n in self.ix.walk(cls):
                    if type(n) is ast.Assign and len(n.targets) == 1 and self._ctor(n.value) is not None:
                        tgt = n.targets[0]
                        if type(tgt) is ast.Attribute and type(tgt.value) is ast.Name and tgt.value.id == "self":
                            found.add(tgt.attr)
        return found

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
        return call is not None and self.named(call.func, SAVES_INPUT_MODULES)

    def module_saves_output(self, value) -> bool:
        """May the module `value` builds keep its output (`output_saves.saves_output`): an activation of
        torchapi's tables, a Sequential whose last layer may, a class of the file whose forward may return one."""
        for _ in range(8):
            call = self._ctor(value)
            if call is None:
                return False
            if self.named(call.func, SAVES_OUTPUT_MODULES):
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
            forward = next((s for s in reversed(cls.body) if type(s) in DEFS and s.name == "forward"), None)
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
            if t in DEFS or t is ast.Lambda:
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
        return self.named(func, SAVES_OUTPUT_CALLS)


def dotted_name(expr) -> str | None:
    parts: list[str] = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def registered_names(call: ast.Call) -> list[str]:
    """The name a `register_parameter(...)` call gives, positional or `name=` (libcst's first `Arg`)."""
    first = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
    return [first.value] if type(first) is ast.Constant and isinstance(first.value, str) else []
