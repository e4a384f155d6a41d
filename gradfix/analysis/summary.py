"""One file's summary for the project index: what other files may ask about it.

Built from CPython's `ast` (about 15x cheaper than libcst's tree) in one walk (astindex.py): the
names the file may be imported as, its imports, its classes with their qualified bases, its
top-level functions and methods, the calls it makes of other files' functions with their grad
mode, and the return facts of returns.py. project.py joins the summaries of a run and answers
the cross-file questions; nothing here looks at another file.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from gradfix.analysis import astindex
from gradfix.analysis.returns import MODULE_CHAIN as _MODULE_CHAIN
from gradfix.analysis.returns import Returned, clearing_classes, clearing_methods, file_returns, forward_numbers, \
    number_functions
from gradfix.analysis.torchapi import NO_GRAD_CONTEXTS as _NO_GRAD
_MODULE_BASE = "torch.nn.Module"


@dataclass(frozen=True)
class CallSite:
    """A call in one file of a function another file of the project defines."""

    target: str           # the qualified name the call resolves to through the caller's imports
    no_grad: bool         # lexically under `with torch.no_grad()` or in a `@torch.no_grad()` function
    caller: str | None    # the enclosing function's name (None at module level)
    line: int
    # (argument position as a string, or keyword) -> the class the argument is surely an instance of:
    # `train(model, metric=BinaryPrecision().to(dev))`, or a name of the caller's scope bound once so
    # (`fn = BinaryRecall()`); arguments of any other shape are not listed (a callee's parameter is
    # judged by what every call passes for it)
    classes: tuple[tuple[str, str], ...] = ()


@dataclass
class FileSummary:
    """What other files may ask about one file."""

    path: str
    names: tuple[str, ...]                           # dotted module names this file may be imported as
    imports: dict[str, str] = field(default_factory=dict)    # local alias -> qualified name
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> qualified bases
    functions: frozenset[str] = frozenset()          # top-level functions, and `Class.method`
    stateless: frozenset[str] = frozenset()          # classes whose own code creates no parameter or submodule
    sites: tuple[CallSite, ...] = ()
    # analysis/returns.py: top-level function -> the calls it returns on every path; class -> its
    # forward's softmax kind
    factories: dict[str, tuple[Returned, ...]] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)
    clears: frozenset[str] = frozenset()             # classes whose forward runs `self.zero_grad()` (returns.py)
    stars: tuple[str, ...] = ()                      # modules imported with `from m import *` at the top level
    clearing: frozenset[str] = frozenset()           # `Class.method`s that clear gradients (returns.py)
    numbers: dict[str, tuple[int, ...]] = field(default_factory=dict)  # class -> forward's number outputs
    number_functions: frozenset[str] = frozenset()   # top-level functions returning a Python number (returns.py)

    def returned_facts(self) -> tuple:
        """What other files read of this file's returns (part of its digest and of `update`'s
        comparison: editing a factory or a forward's last layer changes what importers see)."""
        return (sorted(self.factories.items()), sorted(self.heads.items()), sorted(self.clears), self.stars,
                sorted(self.clearing), sorted(self.numbers.items()), sorted(self.number_functions))


def package_of(path: str) -> str | None:
    """The package a file's relative imports start from: the chain of folders with `__init__.py`
    above it (None for a file outside any package)."""
    folder = os.path.dirname(os.path.abspath(path))
    chain: list[str] = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        chain.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return ".".join(chain) or None


def module_names(path: str, root: str) -> tuple[str, ...]:
    """The dotted names a file may be imported as: its package-qualified name (the chain of
    folders with `__init__.py`), and every suffix of its path below the project root (a script
    folder on `sys.path`, a `src/` layout). Longest first."""
    path = os.path.abspath(path)
    root = os.path.abspath(root)
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.dirname(path)
    parts = [] if stem == "__init__" else [stem]
    rel = os.path.relpath(folder, root)
    below = [] if rel in (".", "") or rel.startswith("..") else rel.replace(os.sep, "/").split("/")
    full = below + parts
    names = {".".join(full[i:]) for i in range(len(full)) if full[i:]}
    package = package_of(path)  # the package-qualified name, even when the root sits inside it
    if package:
        names.add(".".join([package] + parts))
    elif parts:
        names.add(parts[0])
    return tuple(sorted((n for n in names if n), key=lambda n: (-n.count("."), n)))


def _dotted(expr: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def summarise(path: str, source: str, root: str, tree: ast.Module | None = None) -> FileSummary | None:
    """A file's summary, or None when it does not parse (the engine reports that itself)."""
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    names = module_names(path, root)
    package = package_of(path)
    ix = astindex.of(tree)      # one walk of the tree, read by every pass below (and the pre-pass)
    imports = import_table(tree, package)
    qualify = qualifier(imports)

    classes: dict[str, tuple[str, ...]] = {}
    functions: set[str] = set()
    stateless: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = tuple(q for q in (qualify(b) for b in node.bases) if q)
            if _creates_no_state(node, ix, qualify):
                stateless.add(node.name)
            functions.update(f"{node.name}.{m.name}" for m in node.body
                             if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
    sites = _Sites(ix, imports, qualify, functions, classes).of(tree)
    factories, heads = file_returns(tree, qualify)
    return FileSummary(path, names, imports, classes, frozenset(functions), frozenset(stateless), tuple(sites),
                       factories, heads, clearing_classes(tree), star_imports(tree, package), clearing_methods(tree),
                       forward_numbers(tree), number_functions(tree))


class _Scope:
    """One function's (or the module's) bindings, and its calls on local names, resolved when the
    scope is done: `model = Net()` may come after the call in the source."""

    __slots__ = ("bound", "pending", "calls")

    def __init__(self):
        self.bound: dict[str, set] = {}
        self.pending: list[tuple[str, str, bool, str | None, int, ast.Call]] = []
        self.calls: list[tuple[str, bool, str | None, int, ast.Call]] = []


class _Sites:
    """The calls a file makes of other files' functions (`FileSummary.sites`), in one recursive walk.
    A module-level class, not closures inside `summarise`: a nested recursive function and a class made
    per call are reference cycles, which kept each file's whole tree (through the index) alive until the
    cyclic collector ran; now a tree is freed as soon as its last reader drops it (prescan.py runs the
    scan with the collector paused)."""

    __slots__ = ("ix", "children", "imports", "qualify", "functions", "classes", "sites")

    def __init__(self, ix, imports, qualify, functions, classes):
        self.ix, self.children, self.imports, self.qualify = ix, ix.children, imports, qualify
        self.functions, self.classes = functions, classes
        self.sites: list[CallSite] = []

    def of(self, tree: ast.Module) -> list[CallSite]:
        top = _Scope()
        self.visit(self.children(tree), False, None, top)
        self.finish(top)
        return self.sites

    def bind(self, scope: _Scope, target: ast.AST, value: ast.expr | None) -> None:
        for t in (target,) if type(target) is ast.Name else self.ix.walk(target):
            if isinstance(t, ast.Name):
                built = _built_class(value, self.qualify) if value is not None and t is target else None
                scope.bound.setdefault(t.id, set()).add(built)

    def finish(self, scope: _Scope) -> None:
        sites = self.sites
        self.add_calls(scope)
        for head, rest, no_grad, caller, line, call in scope.pending:
            cls = self.bound_class(scope, head)
            if cls is None:
                continue
            if not rest:
                sites.append(CallSite(f"{cls}.forward", no_grad, caller, line))
            elif "." not in rest:
                sites.append(CallSite(f"{cls}.{rest}", no_grad, caller, line, self.argument_classes(scope, call)))

    def add_calls(self, scope: _Scope) -> None:
        """The scope's calls of imported functions, as sites, with what their arguments are."""
        self.sites += [CallSite(q, no_grad, caller, line, self.argument_classes(scope, call))
                       for q, no_grad, caller, line, call in scope.calls]

    @staticmethod
    def bound_class(scope: _Scope, name: str) -> str | None:
        """The class a name of the scope is surely an instance of: bound exactly so, and nothing else."""
        classes_ = scope.bound.get(name)
        if classes_ is None or len(classes_) != 1 or None in classes_:
            return None
        return next(iter(classes_))

    def argument_classes(self, scope: _Scope, call: ast.Call) -> tuple[tuple[str, str], ...]:
        """`CallSite.classes` of one call: positions up to the first `*args`, and keywords."""
        given = []
        for k, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            given.append((str(k), arg))
        given += [(kw.arg, kw.value) for kw in call.keywords if kw.arg is not None]
        out = []
        for key, v in given:
            cls = self.bound_class(scope, v.id) if isinstance(v, ast.Name) else _built_class(v, self.qualify)
            if cls is not None:
                out.append((key, cls))
        return tuple(out)

    def visit(self, kids: list[ast.AST], no_grad: bool, caller: str | None, scope: _Scope) -> None:
        """`kids`: a node's children. A child without children of its own (a name, a constant) is not
        visited: its visit would find nothing, and it was one call per leaf of the tree."""
        qualify, imports, functions, classes = self.qualify, self.imports, self.functions, self.classes
        children = self.children
        for child in kids:
            kind = type(child)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                decorated = any(qualify(d.func if isinstance(d, ast.Call) else d) in _NO_GRAD
                                for d in child.decorator_list)
                inner_scope = _Scope()
                a = child.args
                for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                    if arg is not None:
                        self.bind(inner_scope, ast.Name(arg.arg), None)  # a parameter may hold anything
                self.visit(children(child), decorated, child.name, inner_scope)
                self.finish(inner_scope)
                self.bind(scope, ast.Name(child.name), None)
                continue
            if kind is ast.ClassDef:
                body = _Scope()
                self.visit(children(child), False, None, body)
                self.add_calls(body)   # a class body's own names are not resolved for calls on them
                continue
            inner = no_grad
            if kind is ast.Assign:
                for t in child.targets:
                    self.bind(scope, t, child.value)
            elif kind in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
                self.bind(scope, child.target, None)
            elif kind is ast.For or kind is ast.AsyncFor:
                self.bind(scope, child.target, None)
            elif kind is ast.With or kind is ast.AsyncWith:
                for item in child.items:
                    e = item.context_expr
                    if isinstance(e, ast.Call) and qualify(e.func) in _NO_GRAD:
                        inner = True
                    if item.optional_vars is not None:
                        self.bind(scope, item.optional_vars, None)
            elif kind is ast.Call:
                d = _dotted(child.func)
                if d is not None:
                    head, _, rest = d.partition(".")
                    if head in imports and not (head in functions or head in classes):
                        q = qualify(child.func)
                        if q is not None:
                            scope.calls.append((q, no_grad, caller, child.lineno, child))
                    else:
                        scope.pending.append((head, rest, no_grad, caller, child.lineno, child))
            grand = children(child)
            if grand:
                self.visit(grand, inner, caller, scope)


def star_imports(tree: ast.Module, package: str | None) -> tuple[str, ...]:
    """The modules a file imports everything from at its top level (`from rnn_crf import *`), in order."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            base = resolve_relative(node.module, node.level, package)
            if base is not None:
                out.append(base)
    return tuple(out)


def import_table(tree: ast.Module, package: str | None) -> dict[str, str]:
    """Local alias -> qualified name, for every import of the file (anywhere in it)."""
    imports: dict[str, str] = {}
    for node in astindex.of(tree).of_type(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    imports[a.asname] = a.name
                else:
                    imports.setdefault(a.name.split(".")[0], a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(node.module, node.level, package)
            if base is None:
                continue
            for a in node.names:
                if a.name != "*":
                    imports[a.asname or a.name] = f"{base}.{a.name}"
    return imports


def qualifier(imports: dict[str, str]):
    """`expr -> qualified dotted name` through an import table (the name itself when its head is
    not imported; None for an expression that is not a dotted name)."""
    def qualify(expr: ast.expr) -> str | None:
        d = _dotted(expr)
        if d is None:
            return None
        head, _, rest = d.partition(".")
        full = imports.get(head)
        if full is None:
            return d
        return f"{full}.{rest}" if rest else full
    return qualify


_REGISTERING = frozenset({"register_parameter", "register_buffer", "add_module", "register_module"})


def _creates_no_state(cls: ast.ClassDef, ix: "astindex.AstIndex", qualify) -> bool:
    """Whether the class's own methods assign `self.x` only values made without a call (numbers,
    flags, names: `self.p = p`) or plain tensors (`torch.randn(k, d)`, `.clone()` of one), and register
    nothing: it adds no parameter, buffer or submodule of its own (a dropout or pooling wrapper, a codebook
    kept as plain tensors)."""
    for node in ix.walk(cls):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            to_self = any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                          for target in targets for t in ix.walk(target))
            if to_self and any(isinstance(v, ast.Call) and not _plain_tensor_call(v, qualify)
                               for v in ix.walk(node.value)):
                return False
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            first = node.args[0] if node.args else None
            if name in _REGISTERING or (name == "setattr" and isinstance(first, ast.Name) and first.id == "self"):
                return False
    return True


# tensor methods whose result is a plain tensor, never a module (`.to()` / `.float()` of a module are modules)
_TENSOR_RESULTS = frozenset({"clone", "detach", "contiguous", "t", "view", "reshape", "unsqueeze", "squeeze",
                             "normal_", "uniform_", "zero_", "fill_", "mul_", "add_", "sub_", "div_"})
_PLACING = frozenset({"to", "cuda", "cpu", "float", "double", "half", "long"})


def _plain_tensor_call(call: ast.Call, qualify) -> bool:
    """A call whose value is a plain tensor, registered nowhere: a `torch.*` function outside `torch.nn`
    (`torch.randn(k, d)`, `torch.zeros(k)`), a tensor-only method (`.clone()`), or a placement of either."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in _TENSOR_RESULTS:
        return True
    if isinstance(f, ast.Attribute) and f.attr in _PLACING:
        return isinstance(f.value, ast.Call) and _plain_tensor_call(f.value, qualify)
    q = qualify(f) or ""
    return q.startswith("torch.") and not q.startswith(("torch.nn.", "torch.distributions.", "torch.optim.")) and \
        q.count(".") == 1


def _built_class(value: ast.expr, qualify) -> str | None:
    """`Net(...)`, `Net(...).to(dev).eval()`: the qualified class (None for anything else)."""
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
           and value.func.attr in _MODULE_CHAIN):
        value = value.func.value
    if isinstance(value, ast.Call):
        q = qualify(value.func)
        if q is not None and "." in q and q.rsplit(".", 1)[-1][:1].isupper():
            return q
    return None


def autograd_or_module_base(base: str) -> bool:
    """A qualified base class whose `backward` is autograd's business: a `torch.autograd.Function`, an nn.Module,
    or an unresolved `...Function`."""
    return base.startswith(("torch.autograd.", "torch.nn.")) or base.endswith("Function")


def resolve_relative(module: str | None, level: int, package: str | None) -> str | None:
    """`from ..a import b` inside package `p.q` -> `p.a` (None when it climbs out of the package)."""
    if not level:
        return module
    if package is None:
        return None
    parts = package.split(".")
    if level - 1 >= len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))
