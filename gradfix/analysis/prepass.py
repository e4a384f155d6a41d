"""The `ast` pre-pass: which rules could match a file, decided before libcst parses it.

libcst's parse and the tree index built on it are most of a cold `check` (bench/PROFILE.md),
while most files of a library hold nothing any rule reports. CPython's parser is about 15x
cheaper, and the engine parses with it first anyway (positions, and a SyntaxError before
libcst's parser can crash on deep nesting). One walk of that tree collects the names and
shapes below; each rule declares next to its matcher (`Rule.may_match`) a necessary condition
on them: False means the rule cannot report anything in the file, so it is not run, and a file
no rule may match is never parsed with libcst.

A condition must stay necessary, never a guess: it names what the matcher itself requires (a
`.backward(...)` call for the training-loop rules, a call named like a deprecated API for GF301).
tests/test_prepass.py checks that every golden case with findings passes the condition of each
rule that fires in it.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from functools import cached_property

from gradfix.analysis import astindex
from gradfix.analysis.torchapi import MODULE_MOVES, MODULE_RETURNING, PARAMETRIC_MODULES


@dataclass(frozen=True)
class Facts:
    """What one file's `ast` says, for the rules' necessary conditions."""

    text: str                        # the source (substring tests: a name in an import path, a comment)
    path: str                        # the file's path (a relative import takes its package from it)
    idents: frozenset[str]           # every identifier: names, attributes, keywords, defs, import names
    attrs: frozenset[str]            # `x.<attr>` anywhere (load, store or delete)
    stored_attrs: frozenset[str]     # `x.<attr> = ...` (and `+=`, `del`)
    called: frozenset[str]           # the last name of every call's callee: `f(...)`, `x.f(...)`
    called_attrs: frozenset[str]     # the attribute of every `x.f(...)` call
    discarded: frozenset[str]        # `x.f(...)` as a statement of its own (its value unused)
    defs: frozenset[str]             # names of functions defined anywhere in the file
    augassign: bool                  # an augmented assignment (`x += 1`)
    subscript_store: bool            # an item assignment (`x[i] = v`, `x[i] += v`)
    true_arg: bool                   # a call given the literal `True` (positionally or as a keyword)
    init_class: bool                 # a class whose body defines `__init__`
    attr_container: bool             # `x.a = [...]` (a display or comprehension of a list, tuple, set or dict; `dict()`)
    relative_import: bool            # `from . import x`: a qualified name may take its package from the path
    imported_as: frozenset[tuple[str, str]]  # (local name, last part of what it imports) per import alias
    tree: ast.Module | None = None   # the tree itself, for the conditions decided per scope (below)

    @property
    def backward_call(self) -> bool:
        """A `x.backward(...)` call: every training step (analysis/loops.py) is found from one."""
        return "backward" in self.called_attrs

    @cached_property
    def scopes(self) -> list | None:
        """The file's scopes as analysis/gradscopes.py sees them on the ast (one more walk of the tree, per
        scope: made on first use, by a condition that needs it). None without a tree."""
        if self.tree is None:
            return None
        from gradfix.analysis.gradscopes import scan

        names = frozenset({"Parameter"} | {local for local, name in self.imported_as if name == "Parameter"})
        return scan(self.tree, names, self.true_arg, self._local_names(_INPLACE_FUNCTIONS),
                    self._local_names(_INPLACE_CTORS))

    def _local_names(self, names: frozenset[str]) -> frozenset[str]:
        """`names` and the local names the file's imports give them (`from torch.nn import ReLU as R`)."""
        return names | {local for local, name in self.imported_as if name in names}

    @cached_property
    def _grad_scopes(self) -> set[int]:
        from gradfix.analysis.gradscopes import grad_scopes

        return grad_scopes(self.scopes)

    @cached_property
    def grad_inplace_scopes(self) -> bool:
        """Whether a scope (the module body, a function) GF101 looks at holds an in-place op on a name that may be
        a tensor, may hold a value that requires grad, and may be a hazard the rule shows (analysis/gradscopes.py,
        inplace_hazards.py). Without a tree: as if every scope may."""
        if self.scopes is None:
            return True
        from gradfix.analysis.gradscopes import grad_inplace_scopes

        return grad_inplace_scopes(self.scopes, self._grad_scopes)

    @cached_property
    def grad_detach_mutated(self) -> bool:
        """A scope with a `.detach()` call and an in-place op that may hold a value requiring grad
        (analysis/gradscopes.py). Without a tree: True."""
        if self.scopes is None:
            return True
        from gradfix.analysis.gradscopes import grad_detach_mutated

        return grad_detach_mutated(self.scopes, self._grad_scopes)

    def discarded_on_tensors(self, methods: frozenset[str]) -> bool:
        """A statement `x.<method>(...)` (one of `methods`) whose receiver a flow may find tensor-typed: a
        name its scope binds, a `.grad` / `.data` chain or a view attribute, an expression other than a
        literal (analysis/gradscopes.py `_tensor_receiver`). Without a tree: any discarded call."""
        if self.scopes is None:
            return bool(self.discarded & methods)
        return any(sc.discarded & methods for sc in self.scopes)

    @cached_property
    def keywords(self) -> frozenset[str]:
        """The keyword of every keyword argument of a call (`requires_grad=True`), unlike `idents`, which also
        holds every attribute (`p.requires_grad`). One more walk of the tree, made on first use."""
        if self.tree is None:
            return self.idents
        return frozenset(k.arg for node in astindex.of(self.tree).of_type(ast.Call) for k in node.keywords if k.arg)

    @property
    def requires_grad_request(self) -> bool:
        """A tensor asked to require grad: a call given `requires_grad=...`, or a `.requires_grad_(...)` call
        (GF213's `_is_leaf_ctor`, GF302's and GF304's `copy_chain` / factory tests read only these)."""
        return "requires_grad_" in self.attrs or "requires_grad" in self.keywords

    @cached_property
    def requires_grad_true(self) -> bool:
        """A tensor asked to require grad with a literal True: `requires_grad=True`, `.requires_grad_()` /
        `.requires_grad_(True)`, or `x.requires_grad = True` (what GF302's `copy_chain`, `_flag_set`,
        `_grad_factory_operand` and `type_conversion_copies` accept: params.py `is_true` is the literal only).
        Without a tree: `requires_grad_request` or a `.requires_grad` store."""
        if self.tree is None:
            return self.requires_grad_request or "requires_grad" in self.stored_attrs
        if not (self.requires_grad_request or "requires_grad" in self.stored_attrs):
            return False
        for n in astindex.of(self.tree).of_type(ast.Call, ast.Assign):
            if type(n) is ast.Call:
                if any(k.arg == "requires_grad" and _literal_true(k.value) for k in n.keywords):
                    return True
                if type(n.func) is ast.Attribute and n.func.attr == "requires_grad_" and \
                        (not n.args or _literal_true(n.args[0])):
                    return True
            elif any(type(t) is ast.Attribute and t.attr == "requires_grad" for t in n.targets) and \
                    _literal_true(n.value):
                return True
        return False

    @cached_property
    def forward_calls_a_call(self) -> bool:
        """A call of a call that may build a torch module with parameters (`nn.Linear(d, h)(x)`,
        `nn.Linear(d, h).to(x.device)(x)`, `weight_norm(nn.Conv1d(...))(x)`) somewhere in a function named `forward`:
        GF304's `_built_in_forward` reports one only when `ctor_of` the inner call (moves stripped, wrappers seen
        through) is in PARAMETRIC_MODULES, whose last name is the callee's own or an import's original
        (`self.get_embeddings()(ids)`, `getattr(self, name)(x)` are none). Without a tree: True."""
        if self.tree is None:
            return True
        if "forward" not in self.defs:
            return False
        ix = astindex.of(self.tree)
        if not any(type(c.func) is ast.Call for c in ix.of_type(ast.Call)):
            return False
        original: dict[str, set[str]] = {}
        for local, name in self.imported_as:
            original.setdefault(local, set()).add(name)
        return any(type(n) is ast.Call and type(n.func) is ast.Call and _parametric_ctor(n.func, original)
                   for fn in ix.of_type(ast.FunctionDef, ast.AsyncFunctionDef) if fn.name == "forward"
                   for n in ix.walk(fn))

    @cached_property
    def forward_called_on_another(self) -> bool:
        """A `<dotted name>.forward(...)` call other than `self.forward(...)` / `cls.forward(...)`,
        `super().forward(...)` and `Base.forward(self, ...)` (GF305's `_inspect` returns before anything else for
        those, and for a receiver that is no dotted name). Without a tree: True."""
        if self.tree is None:
            return True
        if "forward" not in self.called_attrs:
            return False
        for n in astindex.of(self.tree).of_type(ast.Call):
            func = n.func
            if type(func) is not ast.Attribute or func.attr != "forward":
                continue
            recv = func.value
            if type(recv) is ast.Name and recv.id in ("self", "cls"):
                continue
            if n.args and type(n.args[0]) is ast.Name and n.args[0].id == "self":
                continue
            while type(recv) is ast.Attribute:
                recv = recv.value
            if type(recv) is ast.Name:
                return True
        return False

    @cached_property
    def methods_on_calls(self) -> frozenset[tuple[str, str]]:
        """(method, callee's last name) for every `f(...).<method>` (`nn.Parameter(t).cuda`). One more walk of the
        tree, made on first use; without a tree, every pair is possible (`None`)."""
        if self.tree is None:
            return None  # type: ignore[return-value]
        out: set[tuple[str, str]] = set()
        for node in astindex.of(self.tree).of_type(ast.Attribute):
            if type(node.value) is ast.Call:
                func = node.value.func
                last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                if last is not None:
                    out.add((node.attr, last))
        return frozenset(out)

    def parameters_into(self, words: tuple[str, ...]) -> bool:
        """An assignment of a call given a `m.parameters()` somewhere in its arguments, the callee's qualified
        name possibly holding one of `words` (`torch.optim.Adam`): its dotted text does, or its first name is
        bound by an import of a name that does, or by a relative import when the file's path does (the package
        a relative import starts from is the path's folders). Without a tree: True."""
        if self.tree is None:
            return True
        in_path = self.relative_import and any(w in os.path.abspath(self.path) for w in words)
        aliases: set[str] = set()
        ix = astindex.of(self.tree)
        for node in ix.of_type(ast.Import, ast.ImportFrom):
            kind = type(node)
            if kind is ast.Import:
                for a in node.names:
                    if a.asname and any(w in a.name for w in words):
                        aliases.add(a.asname)
                    elif not a.asname and any(w in a.name.split(".")[0] for w in words):
                        aliases.add(a.name.split(".")[0])
            elif kind is ast.ImportFrom:
                base = node.module or ""
                for a in node.names:
                    if any(w in f"{base}.{a.name}" for w in words) or (node.level and in_path):
                        aliases.add(a.asname or a.name)
        for node in ix.of_type(ast.Assign, ast.AnnAssign):
            kind = type(node)
            if (kind is ast.Assign or kind is ast.AnnAssign) and type(node.value) is ast.Call:
                call = node.value
                parts = []
                func = call.func
                while type(func) is ast.Attribute:
                    parts.append(func.attr)
                    func = func.value
                if type(func) is not ast.Name:
                    continue
                text = ".".join([func.id, *reversed(parts)])
                if not (any(w in text for w in words) or func.id in aliases):
                    continue
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    for sub in ix.walk(arg):
                        if type(sub) is ast.Call and type(sub.func) is ast.Attribute and \
                                sub.func.attr == "parameters" and not sub.args and not sub.keywords:
                            return True
        return False

    @cached_property
    def module_init_stores(self) -> tuple[bool, bool]:
        """(a display or comprehension, a call asking for requires_grad) assigned to `self.<attr>` in the `__init__`
        of a top-level class with a base: only such a class can be one of FileIndex.module_classes (a class is an
        nn.Module subclass through a base, and the index lists the module body's classes). GF304's `_grad_tensor`
        reads the assigned value only: a factory given `requires_grad=` or a `.requires_grad_()` call in it (moves
        around it included). Without a tree: both."""
        if self.tree is None:
            return True, True
        container = call = False
        ix = astindex.of(self.tree)
        for cls in self.tree.body:
            if type(cls) is not ast.ClassDef or not cls.bases:
                continue
            filled: set[str] | None = None
            for init in cls.body:
                if type(init) not in (ast.FunctionDef, ast.AsyncFunctionDef) or init.name != "__init__":
                    continue
                for node in ix.walk(init):
                    if type(node) is ast.Assign and len(node.targets) == 1:
                        target = node.targets[0]
                        if type(target) is ast.Attribute and type(target.value) is ast.Name \
                                and target.value.id == "self":
                            kind = type(node.value)
                            call = call or (kind is ast.Call and _asks_for_grad(node.value, ix))
                            empty_call = _empty_call(node.value)
                            if container or (kind not in _CONTAINERS and not empty_call):
                                continue
                            if not empty_call and _calls_only(node.value):
                                container = True
                            elif empty_call or (type(node.value) in (ast.List, ast.Dict) and not _elements(node.value)):
                                if filled is None:
                                    filled = _filled_attrs(cls, ix)
                                container = target.attr in filled
        return container, call


_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.GeneratorExp, ast.DictComp)


def _literal_true(expr) -> bool:
    return type(expr) is ast.Constant and expr.value is True


def _asks_for_grad(value, ix) -> bool:
    """A call in `value` given `requires_grad=...`, or a `.requires_grad_(...)` call."""
    return any(type(n) is ast.Call and (any(k.arg == "requires_grad" for k in n.keywords) or
                                        type(n.func) is ast.Attribute and n.func.attr == "requires_grad_")
               for n in ix.walk(value))


def _empty_call(value) -> bool:
    """`dict()` / `list()`: an empty container spelled as a call (GF304's `_empty_container`)."""
    return type(value) is ast.Call and not value.args and not value.keywords and type(value.func) is ast.Name \
        and value.func.id in ("dict", "list")


def _elements(value) -> list:
    return value.values if type(value) is ast.Dict else value.elts


def _calls_only(value) -> bool:
    """A container GF304's `_elements` may find made of module constructors: every element a call (what
    `FileIndex.ctor_of` needs), a dict's keys strings, no starred element; a comprehension of calls."""
    kind = type(value)
    if kind is ast.ListComp or kind is ast.GeneratorExp:
        return type(value.elt) is ast.Call
    if kind is ast.DictComp:
        return type(value.value) is ast.Call
    if kind is ast.Dict:
        return bool(value.values) and all(type(k) in (ast.Constant, ast.JoinedStr) for k in value.keys) and \
            all(type(v) is ast.Call for v in value.values)
    return bool(value.elts) and all(type(v) is ast.Call for v in value.elts)


def _filled_attrs(cls: ast.ClassDef, ix: astindex.AstIndex) -> set[str]:
    """The `self.<attr>` a class body may fill after making it an empty list or dict (GF304's `filled`):
    `self.x.append/extend/insert(...)`, `self.x[k] = ...`, `self.x += ...`."""
    out: set[str] = set()
    for node in ix.walk(cls):
        kind = type(node)
        if kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("append", "extend", "insert"):
            holder = node.func.value
        elif kind is ast.Subscript and type(node.ctx) is ast.Store:
            holder = node.value
        elif kind is ast.AugAssign:
            holder = node.target
        else:
            continue
        if type(holder) is ast.Attribute and type(holder.value) is ast.Name and holder.value.id == "self":
            out.add(holder.attr)
    return out


def _inplace_tables() -> tuple[frozenset[str], frozenset[str]]:
    """The last names of GF101's in-place callees: the functional forms (`F.relu(h, inplace=True)`: the
    qualified name's last part), and the constructors of modules built in place, with what `FileIndex.ctor_of`
    sees through to reach one (`nn.ReLU(True).cuda()`, `weight_norm(...)`)."""
    from gradfix.analysis import torchapi

    functions = frozenset(torchapi.INPLACE_FUNCTIONAL_POSITION)
    ctors = frozenset(torchapi.INPLACE_MODULE_POSITION) | {
        "cuda", "to", "train", "eval", "double", "float", "half", "cpu", "requires_grad_"} | {
        q.rsplit(".", 1)[-1] for q in torchapi.MODULE_RETURNING}
    return functions, ctors


_INPLACE_FUNCTIONS, _INPLACE_CTORS = _inplace_tables()


def _switches_inplace(node: ast.Assign) -> bool:
    """`m.inplace = True`, `self.act.inplace = True`: a module made to run in place after it was built."""
    return len(node.targets) == 1 and type(node.targets[0]) is ast.Attribute and node.targets[0].attr == "inplace" \
        and type(node.value) is ast.Constant and node.value.value is True


def facts_of(tree: ast.Module, text: str, path: str = "") -> Facts:
    idents: set[str] = set()
    attrs: set[str] = set()
    stored: set[str] = set()
    called: set[str] = set()
    called_attrs: set[str] = set()
    discarded: set[str] = set()
    defs: set[str] = set()
    imported_as: set[tuple[str, str]] = set()
    aug = sub_store = true_arg = init_class = relative = attr_container = False
    for node in astindex.of(tree).nodes:    # the root is a Module: nothing below reads it
        kind = type(node)
        if kind is ast.Name:
            idents.add(node.id)
        elif kind is ast.Attribute:
            attrs.add(node.attr)
            if type(node.ctx) is not ast.Load:
                stored.add(node.attr)
        elif kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute:
                called.add(func.attr)
                called_attrs.add(func.attr)
            elif type(func) is ast.Name:
                called.add(func.id)
            if not true_arg:
                true_arg = any(type(a) is ast.Constant and a.value is True for a in node.args) or any(
                    type(k.value) is ast.Constant and k.value.value is True for k in node.keywords)
        elif kind is ast.keyword:
            if node.arg:
                idents.add(node.arg)
        elif kind is ast.Expr:
            value = node.value
            if type(value) is ast.Call and type(value.func) is ast.Attribute:
                discarded.add(value.func.attr)
        elif kind is ast.Assign:
            if not attr_container and len(node.targets) == 1 and type(node.targets[0]) is ast.Attribute:
                attr_container = type(node.value) in _CONTAINERS or _empty_call(node.value)
            if not true_arg and _switches_inplace(node):
                true_arg = True  # `m.inplace = True`: a module switched to run in place (GF101)
        elif kind is ast.AugAssign:
            aug = True
            if type(node.target) is ast.Subscript:
                sub_store = True
            elif type(node.target) is ast.Attribute:
                stored.add(node.target.attr)
        elif kind is ast.Subscript:
            if type(node.ctx) is ast.Store:
                sub_store = True
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defs.add(node.name)
            idents.add(node.name)
        elif kind is ast.ClassDef:
            idents.add(node.name)
            if not init_class:
                init_class = any(type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == "__init__"
                                 for s in node.body)
        elif kind is ast.arg:
            idents.add(node.arg)
        elif kind is ast.alias:
            idents.update(node.name.split("."))
            if node.asname:
                idents.add(node.asname)
                imported_as.add((node.asname, node.name.rsplit(".", 1)[-1]))
            else:
                imported_as.add((node.name, node.name))
        elif kind is ast.ImportFrom:
            if node.module:
                idents.update(node.module.split("."))
            if node.level:
                relative = True
    idents |= attrs
    return Facts(text, path, frozenset(idents), frozenset(attrs), frozenset(stored), frozenset(called),
                 frozenset(called_attrs), frozenset(discarded), frozenset(defs), aug, sub_store, true_arg,
                 init_class, attr_container, relative, frozenset(imported_as), tree)


def rules_for(rules, tree: ast.Module, text: str, path: str = "") -> list:
    """The rules whose necessary condition holds in the file (in their order). A condition that raises keeps its
    rule: the pre-pass may only skip work, and the rule's own run reports what is wrong."""
    facts = facts_of(tree, text, path)
    return [r for r in rules if _may_match(r, facts)]


def _may_match(rule, facts) -> bool:
    try:
        return bool(rule.may_match(facts))
    except Exception:       # RecursionError included
        return True


_PARAMETRIC_LASTS = frozenset(q.rsplit(".", 1)[-1] for q in PARAMETRIC_MODULES)
_WRAPPER_LASTS = frozenset(q.rsplit(".", 1)[-1] for q in MODULE_RETURNING)


def _parametric_ctor(call, original: dict[str, set[str]]) -> bool:
    """May `FileIndex.ctor_of(call)` be one of PARAMETRIC_MODULES (a superset, by last names: the callee's own,
    or the originals of the imports binding the name)."""
    for _ in range(8):
        while type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in MODULE_MOVES:
            call = call.func.value
        if type(call) is not ast.Call:
            return False
        func = call.func
        lasts = {func.attr} if type(func) is ast.Attribute else {func.id} | original.get(func.id, set()) \
            if type(func) is ast.Name else set()
        if lasts & _PARAMETRIC_LASTS:
            return True
        if not lasts & _WRAPPER_LASTS or not call.args:
            return False
        call = call.args[0]
    return False
