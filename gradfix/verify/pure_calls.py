"""Which top-level callables of a file a module-level constant may call when the verifier loads it.

Projects build constants with their own helpers (fairseq: `DATASET_IMPL_CHOICES = ChoiceEnum([...])`, where
`ChoiceEnum` returns `StrEnum("Choices", {k: k for k in choices})`). The verifier runs no module-level code but
imports, literals and constants computed from them (source.py), so every module importing such a name failed to load.

A call runs only when the callee is proved, from its source alone, to compute a value from its arguments and
nothing else:

- a *pure function*: a top-level `def` bound once, without decorators, whose body is a docstring, assignments to
  local names, `if`/`else`, `for` loops (fresh_objects.py) and `return`, over expressions of the kind source.py
  evaluates (literals, arithmetic, comprehensions, pure builtins, `string`/`math` constants), its parameters, the
  file's constants and calls to other pure callables (no recursion). Inside it, the objects the function builds
  itself may be filled (`vocab = {}; for i, c in enumerate(chars): vocab[c] = i`, `out = []; out.append(x)`,
  `n = 0; n += 1`): changing an object made during the call is no effect outside it (fresh_objects.py says which
  names hold only such objects);
- an *enum class*: a top-level class bound once, without decorators, deriving only from `enum`'s plain enum types or
  other enum classes of the file, whose body defines none of the hooks that run code when a member is created or
  looked up (`__new__`, `__init__`, `_missing_`, `_generate_next_value_`, ...), with no metaclass or a metaclass of
  the file that derives from `EnumMeta` and overrides none of `__call__`, `__new__`, `__init__`, `__prepare__`.
  Calling it is the functional API (`E("Name", {...})`) or a lookup by value.

Anything else (a method call, an attribute of an object, a call into another module) keeps the statement dropped.
"""

from __future__ import annotations

import ast
from typing import Callable

from .fresh_objects import Owned, _loads

ENUM_BASES = frozenset({"Enum", "IntEnum", "Flag", "IntFlag", "StrEnum"})
ENUM_METAS = frozenset({"EnumMeta", "EnumType"})
# hooks of an enum class that run code when members are created or looked up
ENUM_HOOKS = frozenset({"__new__", "__init__", "_missing_", "_generate_next_value_", "__init_subclass__",
                        "__set_name__", "__class_getitem__", "__call__"})
META_HOOKS = frozenset({"__call__", "__new__", "__init__", "__prepare__", "__init_subclass__"})

# A checker of expressions: (node, local names, names of pure callables) -> bool. source.py supplies it, so the
# expressions allowed in a pure function are exactly those allowed in a computed constant.
ExprOk = Callable[[ast.AST, frozenset, frozenset], bool]


def _enum_imports(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Names bound at top level by `from enum import X [as Y]` (local name -> X), and local names of `import enum`."""
    names: dict[str, str] = {}
    modules: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "enum" and stmt.level == 0:
            for a in stmt.names:
                names[a.asname or a.name] = a.name
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "enum":
                    modules.add(a.asname or "enum")
    return names, modules


def _enum_ref(node: ast.AST, imported: dict[str, str], modules: set[str]) -> str | None:
    """The `enum` name `node` refers to (`Enum`, `enum.EnumMeta`), or None."""
    if isinstance(node, ast.Name) and node.id in imported:
        return imported[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
        return node.attr
    return None


def _defines(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for s in cls.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(s.name)
        elif isinstance(s, ast.Assign):
            out |= {t.id for t in s.targets if isinstance(t, ast.Name)}
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            out.add(s.target.id)
    return out


def enum_classes(tree: ast.Module, bound: dict[str, int]) -> set[str]:
    """Top-level enum classes whose creation and lookup run only `enum`'s own code (see the module docstring)."""
    imported, modules = _enum_imports(tree)
    if not imported and not modules:
        return set()
    once = {n for n, c in bound.items() if c == 1}
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef) and s.name in once}
    metas: set[str] = set()
    out: set[str] = set()
    for name, cls in classes.items():  # in file order: a base must be defined above
        if cls.decorator_list or any(k.arg != "metaclass" for k in cls.keywords):
            continue
        if all(_enum_ref(b, imported, modules) in ENUM_METAS or (isinstance(b, ast.Name) and b.id in metas)
               for b in cls.bases) and cls.bases and not cls.keywords and not (_defines(cls) & META_HOOKS):
            metas.add(name)
            continue
        meta_ok = all((isinstance(k.value, ast.Name) and k.value.id in metas)
                      or _enum_ref(k.value, imported, modules) in ENUM_METAS for k in cls.keywords)
        bases_ok = bool(cls.bases) and all(
            _enum_ref(b, imported, modules) in ENUM_BASES or (isinstance(b, ast.Name) and b.id in out)
            for b in cls.bases)
        if meta_ok and bases_ok and not (_defines(cls) & ENUM_HOOKS):
            out.add(name)
    return out


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg:
        params.append(a.vararg.arg)
    if a.kwarg:
        params.append(a.kwarg.arg)
    return set(params)


def pure_callables(tree: ast.Module, bound: dict[str, int], expr_ok: ExprOk) -> frozenset:
    """Names of the file's pure functions and enum classes (see the module docstring)."""
    pure = set(enum_classes(tree, bound))
    once = {n for n, c in bound.items() if c == 1}
    fns = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name in once and not s.decorator_list}
    # a function is pure when its body is, given the callables already proved pure; iterate to a fixed point
    # (a function that calls itself, directly or not, never becomes pure)
    changed = True
    while changed:
        changed = False
        for name, fn in fns.items():
            if name in pure:
                continue
            if _body_pure(fn, frozenset(pure), expr_ok):
                pure.add(name)
                changed = True
    return frozenset(pure)


def _body_pure(fn: ast.FunctionDef, pure: frozenset, expr_ok: ExprOk) -> bool:
    a = fn.args
    if any(d is not None and not expr_ok(d, frozenset(), pure) for d in a.defaults + a.kw_defaults):
        return False
    for n in ast.walk(fn):
        if isinstance(n, (ast.Global, ast.Nonlocal, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                          ast.Yield, ast.YieldFrom, ast.Await)) and n is not fn:
            return False
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return _stmts_pure(body, _params(fn), pure, expr_ok, Owned(fn, pure, expr_ok))


def _stmts_pure(stmts: list[ast.stmt], names: set[str], pure: frozenset, expr_ok: ExprOk, owned: Owned,
                in_loop: bool = False) -> bool:
    for s in stmts:
        if owned.fills(s, names):  # `vocab[c] = i`, `out.append(x)`, `n += 1` on an object the call made
            continue
        if isinstance(s, (ast.Break, ast.Continue)) and in_loop:
            continue
        if isinstance(s, ast.For):
            target = [n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)]
            if (s.orelse or not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for n in ast.walk(s.target))
                    or not expr_ok(s.iter, frozenset(names), pure) or owned.mutated_in(s) & _loads(s.iter)):
                return False  # (a loop over an object its body fills might never end)
            inner = set(names) | set(target)
            if not _stmts_pure(s.body, inner, pure, expr_ok, owned, True):
                return False
            names |= inner
            continue
        if isinstance(s, ast.Return):
            if s.value is not None and not expr_ok(s.value, frozenset(names), pure):
                return False
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if s.value is None or not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets):
                return False
            flat = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            if not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store, ast.Load))
                       for t in targets for n in ast.walk(t)):
                return False  # starred or subscripted targets
            if not expr_ok(s.value, frozenset(names), pure):
                return False
            names |= set(flat)
        elif isinstance(s, ast.If):
            if not expr_ok(s.test, frozenset(names), pure):
                return False
            inner_a, inner_b = set(names), set(names)
            if not (_stmts_pure(s.body, inner_a, pure, expr_ok, owned, in_loop)
                    and _stmts_pure(s.orelse, inner_b, pure, expr_ok, owned, in_loop)):
                return False
            names |= inner_a | inner_b
        elif isinstance(s, ast.Pass):
            continue
        else:
            return False
    return True
