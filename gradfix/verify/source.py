"""What of a checked file runs when the verifier loads it (stdlib `ast` only, no torch).

- `classify_module` / `evaluable`: the module-level statements executed (imports, definitions, literal constants,
  constants computed from them and the pure builtins, type factories) and those that are not;
- `strip_module` drops module-level code that must not run (training loops, `__main__` blocks);
- `uses_cuda` decides whether the cuda->cpu redirect is needed.
What the rewrite changed between the two versions is read in changes.py.
"""

from __future__ import annotations

import ast

from . import pure_methods as PM

DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False, include_attributes=False)


# --------------------------------------------------------------------------- stripping


def _is_literal(node: ast.AST) -> bool:
    """A value that is a literal, a container of literals, or arithmetic on literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) and _is_literal(node.right)
    return False


def _is_cuda_available_call(node: ast.AST) -> bool:
    """`torch.cuda.is_available()`, or `torch.backends.mps.is_available()` (Apple's backend, in the same chains)."""
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == "is_available"
            and isinstance(node.func.value, ast.Attribute)):
        return False
    owner = node.func.value
    if owner.attr == "cuda":
        return True
    return (owner.attr == "mps" and isinstance(owner.value, ast.Attribute) and owner.value.attr == "backends"
            and isinstance(owner.value.value, ast.Name) and owner.value.value.id == "torch")


def _is_device_value(node: ast.AST, ok=None) -> bool:
    """`torch.device("cuda" if torch.cuda.is_available() else "cpu")` and similar pure device expressions
    (`cuda = torch.cuda.is_available()` too: a notebook's flag that `device = "cuda" if cuda else "cpu"` reads).
    With `ok` (a test of computed constants: `_classify` passes one), a part may also be such a constant:
    `torch.device("cuda" if use_cuda else "cpu")` after `use_cuda = torch.cuda.is_available()`,
    `torch.device(f"cuda:{GPU}" if ... else "cpu")` after `GPU = 0`; nothing but `torch.device` and the
    `is_available()` probes is called."""
    if _is_literal(node) or _is_cuda_available_call(node) or (ok is not None and ok(node)):
        return True
    if isinstance(node, ast.IfExp):
        return (_is_device_value(node.test, ok)) and _is_device_value(node.body, ok) and _is_device_value(
            node.orelse, ok)
    if isinstance(node, ast.BoolOp):
        return all(_is_device_value(v, ok) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _is_device_value(node.operand, ok)
    if isinstance(node, ast.JoinedStr) and ok is not None:
        return all(isinstance(v, ast.Constant) or (isinstance(v, ast.FormattedValue) and v.format_spec is None
                                                    and ok(v.value)) for v in node.values)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "device" and isinstance(f.value, ast.Name) and f.value.id == "torch":
            return all(_is_device_value(a, ok) for a in node.args) and not node.keywords
    return False


def _target_names(target: ast.AST) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[str] = []
        for e in target.elts:
            names = _target_names(e)
            if names is None:
                return None
            out.extend(names)
        return out
    return None


def _mentions_dunder_name(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node))


def is_kept(stmt: ast.stmt) -> bool:
    """Whether a module-level statement is executed when the verifier loads a version."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass) + DEF_TYPES):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True  # docstring, `...`
    if isinstance(stmt, ast.Assign):
        names = [_target_names(t) for t in stmt.targets]
        if any(n is None for n in names):
            return False
        flat = [x for n in names for x in n]  # type: ignore[union-attr]
        return flat == ["__all__"] or _is_literal(stmt.value) or _is_device_value(stmt.value)
    if isinstance(stmt, ast.AnnAssign):
        if not isinstance(stmt.target, ast.Name):
            return False
        return stmt.value is None or _is_literal(stmt.value) or _is_device_value(stmt.value)
    if isinstance(stmt, ast.If):
        if _mentions_dunder_name(stmt.test):
            return False
        return all(is_kept(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, ast.Try):
        parts = stmt.body + stmt.orelse + stmt.finalbody
        for h in stmt.handlers:
            parts = parts + h.body
        return all(is_kept(s) for s in parts)
    return False


_ASSIGNED: dict[int, tuple[ast.AST, frozenset[str]]] = {}  # id(stmt) -> (stmt, names): one check asks ~50 times


def _assigned_names(stmt: ast.AST) -> set[str]:
    """Every name `stmt` binds, at any depth (a fresh set per call; computed once per statement: the trees of a
    check are never changed in place, the instrumented and rewritten ones are copies)."""
    hit = _ASSIGNED.get(id(stmt))
    if hit is None or hit[0] is not stmt:
        if len(_ASSIGNED) > 4096:
            _ASSIGNED.clear()
        hit = (stmt, frozenset(_walk_assigned(stmt)))
        _ASSIGNED[id(stmt)] = hit
    return set(hit[1])


def _walk_assigned(stmt: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, DEF_TYPES):
            out.add(node.name)
    return out


class Stripped:
    """Only the kept statements (original line numbers), plus what was dropped."""

    def __init__(self, tree: ast.Module, kept: list[ast.stmt], dropped: list[ast.stmt],
                 kept_names_from: list[ast.stmt] | None = None):
        self.tree = ast.Module(body=kept, type_ignores=[])
        self._kept = kept if kept_names_from is None else kept_names_from
        self._dropped = dropped
        self._dropped_names: set[str] | None = None
        self.with_methods: list[tuple[str, int]] = []  # statements run with builtin methods (pure_methods.py)

    @property
    def dropped_count(self) -> int:
        return len(self._dropped)

    @property
    def dropped_names(self) -> set[str]:
        """Names bound only by statements that were dropped (computed on demand)."""
        if self._dropped_names is None:
            kept_names: set[str] = set()
            for s in self._kept:
                kept_names |= _assigned_names(s)
            dropped: set[str] = set()
            for s in self._dropped:
                dropped |= _assigned_names(s)
            self._dropped_names = dropped - kept_names
        return self._dropped_names

    def uses_cuda(self) -> bool:
        return uses_cuda(self.tree)


# Builtins that compute a value from their arguments and nothing else (no I/O, no state).
PURE_BUILTINS = frozenset({
    "len", "range", "int", "float", "str", "bool", "tuple", "list", "dict", "set", "frozenset", "sorted",
    "reversed", "min", "max", "abs", "round", "sum", "enumerate", "zip", "ord", "chr", "divmod",
})
# Standard-library modules whose attributes (and, for math, functions) are constants of the language.
PURE_MODULES = frozenset({"string", "math"})
# numpy (`import numpy as np`): the array constructors a config literal uses (`np.array([1, 2, 4]) * 512`), called
# only on arguments that are constants themselves, and its dtype and number constants; nothing else of numpy.
NUMPY_CALLS = frozenset({"array", "asarray", "arange", "zeros", "ones", "full", "linspace", "eye"})
NUMPY_VALUES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_",
                          "pi", "e", "inf", "nan"})


def _module_bindings(tree: ast.Module) -> dict[str, int]:
    """How many module-level statements bind each name (a shadowed builtin is not pure)."""
    count: dict[str, int] = {}
    for stmt in tree.body:
        for name in _assigned_names(stmt):
            count[name] = count.get(name, 0) + 1
    return count


def _is_computed_constant(node: ast.AST, consts: set[str], modules: set[str], bound: dict[str, int],
                          pure: frozenset = frozenset(), local0: frozenset = frozenset(), methods: bool = False) -> bool:
    """An expression over literals and earlier constants of the file: arithmetic, comparisons, indexing,
    comprehensions, pure builtins (`len(char_list)`, `[c for c in chars]`), `string`/`math` constants and calls to
    the file's `pure` callables (pure_calls.py). Evaluating it runs no code with an effect outside the module.
    `local0`: names local to the enclosing pure function (its parameters and locals). `methods`: also the listed
    methods of builtin values (pure_methods.py), which run only through its guard."""

    def ok(n: ast.AST, local: frozenset[str]) -> bool:
        if isinstance(n, ast.Constant):
            return True
        if isinstance(n, ast.Name):
            return isinstance(n.ctx, ast.Load) and (n.id in local or n.id in consts)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            return all(ok(e, local) for e in n.elts)
        if isinstance(n, ast.Dict):
            return all(k is not None and ok(k, local) for k in n.keys) and all(ok(v, local) for v in n.values)
        if isinstance(n, ast.UnaryOp):
            return ok(n.operand, local)
        if isinstance(n, ast.BinOp):
            return ok(n.left, local) and ok(n.right, local)
        if isinstance(n, ast.BoolOp):
            return all(ok(v, local) for v in n.values)
        if isinstance(n, ast.Compare):
            return ok(n.left, local) and all(ok(c, local) for c in n.comparators)
        if isinstance(n, ast.IfExp):
            return ok(n.test, local) and ok(n.body, local) and ok(n.orelse, local)
        if isinstance(n, ast.Subscript):
            return ok(n.value, local) and ok(n.slice, local)
        if isinstance(n, ast.Slice):
            return all(x is None or ok(x, local) for x in (n.lower, n.upper, n.step))
        if isinstance(n, ast.Attribute):  # `string.ascii_letters`, `math.pi`, `np.float32`
            return isinstance(n.value, ast.Name) and n.value.id in modules and n.value.id not in local and (
                n.value.id in PURE_MODULES or n.attr in NUMPY_VALUES)
        if isinstance(n, ast.Call):
            f = n.func
            callee_ok = (isinstance(f, ast.Name) and f.id in PURE_BUILTINS and f.id not in bound and f.id not in local) or (
                isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math"
                and "math" in modules and f.value.id not in local) or (
                isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules
                and f.value.id not in PURE_MODULES and f.value.id not in local and f.attr in NUMPY_CALLS) or (
                isinstance(f, ast.Name) and f.id in pure and f.id not in local) or (
                methods and PM.is_pure_method_call(n, modules) and ok(f.value, local))  # type: ignore[union-attr]
            return callee_ok and all(not isinstance(a, ast.Starred) and ok(a, local) for a in n.args) and all(
                k.arg is not None and ok(k.value, local) for k in n.keywords)
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(local)
            for g in n.generators:
                names = _target_names(g.target)
                if names is None or g.is_async or not ok(g.iter, frozenset(inner)):
                    return False
                inner |= set(names)
                if not all(ok(c, frozenset(inner)) for c in g.ifs):
                    return False
            fin = frozenset(inner)
            if isinstance(n, ast.DictComp):
                return ok(n.key, fin) and ok(n.value, fin)
            return ok(n.elt, fin)
        return False

    return ok(node, local0)


def _computed_constant_names(stmt: ast.stmt, consts: set[str], modules: set[str], bound: dict[str, int],
                             pure: frozenset = frozenset(), methods: bool = False) -> list[str] | None:
    """The names a top-level `NAME = <computed constant>` binds, or None when it is not one."""
    if isinstance(stmt, ast.Assign):
        names = [_target_names(t) for t in stmt.targets]
        if any(n is None for n in names):
            return None
        flat = [x for n in names for x in n]  # type: ignore[union-attr]
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        flat = [stmt.target.id]
    else:
        return None
    if not flat or not _is_computed_constant(stmt.value, consts, modules, bound, pure,  # type: ignore[arg-type]
                                             methods=methods):
        return None
    return flat


def _is_import_alias(stmt: ast.stmt, imported: set[str]) -> bool:
    """`FSDP = torch.nn.Module`: a name bound to an attribute of an imported name, which runs no code."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    v = stmt.value
    while isinstance(v, ast.Attribute):
        v = v.value
    return isinstance(v, ast.Name) and v.id in imported


TYPE_FACTORY_MODULES = frozenset({"typing", "typing_extensions", "collections"})
TYPE_FACTORIES = frozenset({"NamedTuple", "namedtuple", "TypedDict", "TypeVar", "NewType"})


def _is_type_expr(n: ast.AST, imported: set[str]) -> bool:
    """Literals and imported names, indexed or dotted (`Optional[List[Tensor]]`, `torch.Tensor`)."""
    if isinstance(n, ast.Constant):
        return True
    if isinstance(n, ast.Name):
        return n.id in imported
    if isinstance(n, ast.Attribute):
        return _is_type_expr(n.value, imported)
    if isinstance(n, ast.Subscript):
        return _is_type_expr(n.value, imported) and _is_type_expr(n.slice, imported)
    if isinstance(n, (ast.Tuple, ast.List)):
        return all(_is_type_expr(e, imported) for e in n.elts)
    return False


def _is_type_factory(stmt: ast.stmt, imported: set[str], typing_names: set[str],
                     typing_modules: frozenset | set = frozenset()) -> bool:
    """`EncoderOut = NamedTuple("EncoderOut", [("out", Tensor), ...])`, or `collections.namedtuple("Spec",
    ["size", "stride"])` after a plain `import collections`: a class made from a name and type expressions; making
    it runs no code of the project's."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    call = stmt.value
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    named = (isinstance(f, ast.Name) and f.id in typing_names) or (
        isinstance(f, ast.Attribute) and f.attr in TYPE_FACTORIES and isinstance(f.value, ast.Name)
        and f.value.id in typing_modules)
    return (named
            and all(not isinstance(a, ast.Starred) and _is_type_expr(a, imported) for a in call.args)
            and all(k.arg is not None and _is_type_expr(k.value, imported) for k in call.keywords))


def _is_import_fallback(stmt: ast.stmt, imported: set[str]) -> bool:
    """`try: from fairscale... import FSDP / except ImportError: FSDP = torch.nn.Module`: the import-fallback
    idiom, whose parts are kept statements or aliases of imported names. It runs guarded, like a computed
    constant, so a fallback that raises leaves its names unset instead of making the file unloadable."""
    if not isinstance(stmt, ast.Try):
        return False
    parts = stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
    return all(is_kept(s) or _is_import_alias(s, imported) for s in parts) and any(
        _is_import_alias(s, imported) for s in parts)


def _guarded(stmt: ast.stmt) -> ast.stmt:
    """`try: stmt / except Exception: pass`: a computed constant that raises leaves its name unset (as when
    it was not run) instead of making the whole file unloadable."""
    handler = ast.ExceptHandler(type=ast.Name(id="Exception", ctx=ast.Load()), name=None, body=[ast.Pass()])
    guard = ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[])
    for node in (guard, handler, handler.type, handler.body[0]):
        ast.copy_location(node, stmt)
        node.end_lineno, node.end_col_offset = stmt.end_lineno, stmt.end_col_offset  # type: ignore[attr-defined]
    return guard


def classify_module(tree: ast.Module, methods: bool = False) -> tuple[list[ast.stmt], list[ast.stmt], list[ast.stmt]]:
    """(kept, computed, dropped) top-level statements, in order. `computed` are constants computed from
    literals and earlier constants (see `_is_computed_constant`), possibly by calls to the file's pure callables
    (pure_calls.py); they run too, guarded. `methods`: also constants that call methods of builtin values and
    statements that mutate a constant (pure_methods.py); only the loaded module (strip_module) runs those, rewritten."""
    key = (id(tree), methods)
    hit = _CLASSIFIED.get(key)
    if hit is None or hit[0] is not tree:
        if len(_CLASSIFIED) > 64:
            _CLASSIFIED.clear()
        kept, computed, dropped, _modules, _pure = _classify_full(tree, methods)
        hit = (tree, (kept, computed, dropped))
        _CLASSIFIED[key] = hit
    kept, computed, dropped = hit[1]
    return list(kept), list(computed), list(dropped)


# (id(tree), methods) -> (tree, result): a check classifies each of its trees four to six times (the trees of a
# check are never changed in place)
_CLASSIFIED: dict[tuple[int, bool], tuple[ast.Module, tuple[list, list, list]]] = {}


def _classify_full(tree: ast.Module, methods: bool):
    bound = _module_bindings(tree)
    poisoned: set[int] = set()
    while True:
        kept, computed, dropped, consts, modules, pure = _classify_pure(tree, bound, methods, frozenset(poisoned))
        if not methods:
            return kept, computed, dropped, modules, pure
        more = PM.poisoned(tree.body, {id(s) for s in computed}, {id(s) for s in dropped}, _assigned_names) - poisoned
        if not more:
            return kept, computed, dropped, modules, pure
        poisoned |= more


def _classify_pure(tree: ast.Module, bound: dict[str, int], methods: bool, poisoned: frozenset):
    kept, computed, dropped, consts, modules = _classify(tree, bound, frozenset(), methods, poisoned)
    pure: frozenset = frozenset()
    if any(isinstance(s, (ast.FunctionDef, ast.ClassDef)) for s in tree.body):
        from .pure_calls import pure_callables

        def expr_ok(n: ast.AST, local: frozenset, pure: frozenset) -> bool:
            return _is_computed_constant(n, consts, modules, bound, pure, local, methods)

        pure = pure_callables(tree, bound, expr_ok)
        if pure:
            kept, computed, dropped, consts, modules = _classify(tree, bound, pure, methods, poisoned)
    return kept, computed, dropped, consts, modules, pure


def evaluable(tree: ast.Module):
    """A test of expressions the verifier may evaluate in the loaded module: those a computed constant may be
    (literals, the file's constants, pure builtins and the file's pure callables), e.g. a call site's arguments.
    The constants are those the loaded module computes (with methods, pure_methods.py); the expressions themselves
    may call no method, since nothing guards them."""
    bound = _module_bindings(tree)
    consts = _loaded_constants(tree)
    _k, _c, _d, _consts, modules, pure = _classify_pure(tree, bound, False, frozenset())
    # `local`: names of the enclosing function the caller knows to be constants too (call_sites.py)
    return lambda node, local=frozenset(): _is_computed_constant(node, consts, modules, bound, pure, local)


def evaluable_guarded(tree: ast.Module):
    """Like `evaluable`, with the methods of builtin values too (pure_methods.py): (a test of expressions, a
    rewrite of an accepted expression that sends each method call through the guard and each call of a method-calling
    pure function of the file to its guarded copy, as the loaded module defines them). Only an expression rewritten
    so may be evaluated, and only in the loaded module (where the guard and the copies are defined)."""
    bound = _module_bindings(tree)
    consts = _loaded_constants(tree)
    _k, _c, _d, modules, pure = _classify_full(tree, True)
    copies = PM.method_functions(tree, pure, modules)

    def ok(node, local=frozenset()):
        return _is_computed_constant(node, consts, modules, bound, pure, local, methods=True)

    def rewrite(node: ast.expr) -> ast.expr:
        import copy as _copy

        return ast.fix_missing_locations(PM._Rewrite(modules, copies).visit(_copy.deepcopy(node)))

    return ok, rewrite


def _loaded_constants(tree: ast.Module) -> set[str]:
    kept, computed, _dropped, _modules, _pure = _classify_full(tree, True)
    out: set[str] = set()
    for s in kept:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            out |= _assigned_names(s)
    for s in computed:
        out |= _assigned_names(s)
    return out


def _classify(tree: ast.Module, bound: dict[str, int], pure: frozenset, methods: bool = False,
              poisoned: frozenset = frozenset()):
    kept: list[ast.stmt] = []
    computed: list[ast.stmt] = []
    dropped: list[ast.stmt] = []
    consts: set[str] = set()
    modules: set[str] = set()
    imported: set[str] = set()
    typing_names: set[str] = set()  # names imported from typing / collections (`NamedTuple`, `namedtuple`)
    typing_modules: set[str] = set()  # `import collections` / `import typing`, bound once: `collections.namedtuple`
    torch_plain = _binds_torch_plainly(tree)
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module in TYPE_FACTORY_MODULES:
            typing_names |= {a.asname or a.name for a in stmt.names if a.name in TYPE_FACTORIES}
        if isinstance(stmt, ast.Import):
            typing_modules |= {a.asname or a.name for a in stmt.names
                               if a.name in TYPE_FACTORY_MODULES and bound.get(a.asname or a.name) == 1}
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Try)):
            imported |= {n for s in ast.walk(stmt) if isinstance(s, (ast.Import, ast.ImportFrom))
                         for n in _assigned_names(s)}
        if is_kept(stmt):
            kept.append(stmt)
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname is None and a.name in PURE_MODULES and bound.get(a.name) == 1:
                        modules.add(a.name)
                    elif a.name == "numpy" and (a.asname or a.name) not in PURE_MODULES \
                            and bound.get(a.asname or a.name) == 1:
                        modules.add(a.asname or a.name)  # numpy: NUMPY_CALLS and NUMPY_VALUES only
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                consts |= _assigned_names(stmt)
            continue
        if id(stmt) in poisoned:  # a dropped statement may mutate what it computes (pure_methods.poisoned)
            dropped.append(stmt)
            consts -= _assigned_names(stmt)
            continue
        names = _computed_constant_names(stmt, consts, modules, bound, pure, methods)
        if names is None and methods:
            mut = PM.mutation(stmt)
            if mut is not None and mut[0] in consts and _is_computed_constant(
                    ast.Tuple(elts=list(mut[1].args), ctx=ast.Load()), consts, modules, bound, pure,
                    methods=True) and all(k.arg is not None and _is_computed_constant(
                        k.value, consts, modules, bound, pure, methods=True) for k in mut[1].keywords):
                names = []  # `vocabulary.add("<unk>")`: binds nothing, changes a constant
        if names is None and isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets) \
                and torch_plain and _is_device_value(
                    stmt.value, lambda n: _is_computed_constant(n, consts, modules, bound, pure)):
            names = sorted(_assigned_names(stmt))  # a device built from the file's flags (`_is_device_value`)
        if names is None and (_is_import_fallback(stmt, imported)
                              or _is_type_factory(stmt, imported, typing_names, typing_modules)):
            names = sorted(_assigned_names(stmt))
        if names is not None:
            computed.append(stmt)
            consts |= set(names)
        else:
            dropped.append(stmt)
    return kept, computed, dropped, consts, modules


def _binds_torch_plainly(tree: ast.Module) -> bool:
    """`torch` is bound at module level, and only by `import torch` / `import torch.x` (a notebook may repeat them)."""
    seen = False
    for stmt in tree.body:
        if "torch" not in _assigned_names(stmt):
            continue
        if not (isinstance(stmt, ast.Import) and all(
                a.asname != "torch" and (a.asname is not None or a.name.split(".")[0] == "torch")
                for a in stmt.names if (a.asname or a.name.split(".")[0]) == "torch")):
            return False
        seen = True
    return seen


def strip_module(tree: ast.Module) -> Stripped:
    kept, computed, dropped, modules, pure = _classify_full(tree, True)
    ids, keep = {id(s) for s in computed}, {id(s) for s in kept}
    copies = PM.method_functions(tree, pure, modules)
    with_methods: list[tuple[str, int]] = []  # (names, line) of the statements run through the guard
    body: list[ast.stmt] = []
    guard = False
    for s in tree.body:
        if id(s) in ids:
            mut = PM.mutation(s)
            if mut is not None or PM.uses_methods(s, modules) or PM.calls_any(s, copies):
                targets = s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", s)]
                names = sorted({n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)})
                with_methods.append((mut[0] if mut is not None else ", ".join(names), s.lineno))
                s = PM.rewrite(s, modules, copies)
                if not guard:
                    body.append(PM.guard_def(s))
                    guard = True
            body.append(_guarded(s) if mut is None else PM.guarded_mutation(s, mut[0]))
        elif id(s) in keep:
            body.append(s)
            if isinstance(s, ast.FunctionDef) and s.name in copies:
                if not guard:
                    body.append(PM.guard_def(s))
                    guard = True
                body.append(PM.function_copy(s, modules, copies))
    # a computed constant's names count as dropped: if it raised, a unit that needs it is told why
    out = Stripped(tree, body, dropped + computed, kept_names_from=kept)
    out.with_methods = with_methods
    return out


# --------------------------------------------------------------------------- diff


def uses_cuda(*trees_or_sources: ast.AST | str | None) -> bool:
    for t in trees_or_sources:
        if t is None:
            continue
        if isinstance(t, str):
            if "cuda" not in t:
                continue
            try:
                t = ast.parse(t)
            except SyntaxError:
                return True
        for n in ast.walk(t):
            if isinstance(n, ast.Attribute) and n.attr == "cuda":
                return True
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("cuda"):
                return True
    return False


# --------------------------------------------------------------------------- loss expressions
