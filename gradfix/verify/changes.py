"""What the rewrite changed, read from the two versions' trees (stdlib `ast` only, no torch).

- `analyze` finds the top-level classes and functions that differ, the module-level statements the verifier
  executes (source.py decides which) that differ, and those it does not execute;
- `substitute_opaque` turns a loss expression into one over synthetic leaves (the scale check).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from .source import DEF_TYPES, _assigned_names, _dump, classify_module


def _top_defs(tree: ast.Module) -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for stmt in tree.body:
        if isinstance(stmt, DEF_TYPES):
            out[stmt.name] = stmt
    return out


def _free_refs(node: ast.AST) -> set[str]:
    refs: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            refs.add(n.id)
    return refs


def _methods(cls: ast.ClassDef) -> dict[str, ast.AST]:
    return {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _self_calls(fn: ast.AST) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            out.add(n.attr)
    return out


def methods_reached_from_forward(cls: ast.ClassDef) -> set[str]:
    """Methods that constructing the class and calling forward can reach (by `self.<name>`)."""
    methods = _methods(cls)
    todo = [m for m in methods if m in ("forward", "__init__", "__call__") or (m.startswith("__") and m.endswith("__"))]
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen or m not in methods:
            continue
        seen.add(m)
        todo.extend(_self_calls(methods[m]) & set(methods))
    return seen


@dataclass
class Analysis:
    old_tree: ast.Module
    new_tree: ast.Module
    changed_classes: list[str] = field(default_factory=list)  # present in both, code differs
    changed_functions: list[str] = field(default_factory=list)
    only_in_one: list[str] = field(default_factory=list)  # defs added or removed
    changed_constants: set[str] = field(default_factory=set)  # names bound by changed kept statements
    module_code_changed: bool = False  # a statement the verifier does not execute changed
    # class name -> changed methods (or "<class body>")
    changed_methods: dict[str, list[str]] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return not (
            self.changed_classes
            or self.changed_functions
            or self.only_in_one
            or self.changed_constants
            or self.module_code_changed
        )

    def classes_depending_on(self, names: set[str]) -> list[str]:
        """Top-level classes (of the new version) whose code reaches any of `names`, transitively."""
        defs = _top_defs(self.new_tree)
        refs = {n: _free_refs(d) for n, d in defs.items()}
        reached = set(names)
        changed = True
        while changed:
            changed = False
            for n, r in refs.items():
                if n not in reached and r & reached:
                    reached.add(n)
                    changed = True
        return [n for n, d in defs.items() if isinstance(d, ast.ClassDef) and n in reached and n not in names]

    def unreached_changed_methods(self, cls: str) -> list[str]:
        d = _top_defs(self.new_tree).get(cls)
        if not isinstance(d, ast.ClassDef):
            return []
        reached = methods_reached_from_forward(d)
        return [m for m in self.changed_methods.get(cls, []) if m != "<class body>" and m not in reached]


def _segment(lines: list[str] | None, node: ast.AST) -> str | None:
    if lines is None:
        return None
    start = node.lineno - 1
    if isinstance(node, DEF_TYPES) and node.decorator_list:
        start = min(start, min(d.lineno for d in node.decorator_list) - 1)
    return "\n".join(lines[max(start, 0): node.end_lineno])


def analyze(old_tree: ast.Module, new_tree: ast.Module, old_src: str | None = None, new_src: str | None = None) -> Analysis:
    a = Analysis(old_tree, new_tree)
    old_defs, new_defs = _top_defs(old_tree), _top_defs(new_tree)
    old_lines = old_src.splitlines() if old_src is not None else None
    new_lines = new_src.splitlines() if new_src is not None else None
    for name in list(old_defs) + [n for n in new_defs if n not in old_defs]:
        o, n = old_defs.get(name), new_defs.get(name)
        if o is None or n is None:
            a.only_in_one.append(name)
            continue
        seg_o, seg_n = _segment(old_lines, o), _segment(new_lines, n)
        if seg_o is not None and seg_o == seg_n:
            continue  # same text (fast path)
        if _dump(o) == _dump(n):
            continue
        if isinstance(n, ast.ClassDef):
            a.changed_classes.append(name)
            if isinstance(o, ast.ClassDef):
                om, nm = _methods(o), _methods(n)
                ch = [
                    m
                    for m in set(om) | set(nm)
                    if m not in om
                    or m not in nm
                    or (_segment(old_lines, om[m]) != _segment(new_lines, nm[m]) and _dump(om[m]) != _dump(nm[m]))
                ]
                rest_o = [_dump(s) for s in o.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                rest_n = [_dump(s) for s in n.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if rest_o != rest_n or _dump(ast.Tuple(elts=o.bases, ctx=ast.Load())) != _dump(
                    ast.Tuple(elts=n.bases, ctx=ast.Load())
                ) or [_dump(x) for x in o.decorator_list] != [_dump(x) for x in n.decorator_list]:
                    ch.append("<class body>")
                a.changed_methods[name] = sorted(ch)
        else:
            a.changed_functions.append(name)

    def other(tree: ast.Module, kept: bool) -> list[ast.stmt]:
        k, computed, _dropped = classify_module(tree)
        run = {id(s) for s in k + computed}
        return [s for s in tree.body if not isinstance(s, DEF_TYPES) and (id(s) in run) == kept]

    def keys(stmts: list[ast.stmt], lines: list[str] | None) -> list[str]:
        return [(_segment(lines, s) if lines is not None else None) or _dump(s) for s in stmts]

    ok, nk = other(old_tree, True), other(new_tree, True)
    if keys(ok, old_lines) != keys(nk, new_lines):
        od, nd = {_dump(s) for s in ok}, {_dump(s) for s in nk}
        for s in ok + nk:
            if _dump(s) not in (od & nd):
                a.changed_constants |= _assigned_names(s)
    ou, nu = other(old_tree, False), other(new_tree, False)
    if keys(ou, old_lines) != keys(nu, new_lines):
        if [_dump(s) for s in ou] != [_dump(s) for s in nu]:
            a.module_code_changed = True
    return a


# --------------------------------------------------------------------------- cuda


def _norm_expr(src: str) -> str:
    return _dump(ast.parse(src.strip(), mode="eval").body)


class _Opaque(ast.NodeTransformer):
    def __init__(self, opaque: dict[str, str]):
        self.opaque = opaque  # dump -> leaf name
        self.used: set[str] = set()

    def visit(self, node: ast.AST) -> ast.AST:  # type: ignore[override]
        if isinstance(node, ast.expr):
            key = _dump(node)
            if key in self.opaque:
                self.used.add(self.opaque[key])
                return ast.copy_location(ast.Name(id=self.opaque[key], ctx=ast.Load()), node)
        return super().visit(node)


@dataclass
class OpaqueExpr:
    code: ast.Expression
    leaves: list[str]  # leaf names used by this expression
    free: set[str]  # other free names (must be provided by the namespace)


def substitute_opaque(expr: str, opaque: list[str], leaf_prefix: str = "__gf_leaf") -> OpaqueExpr:
    """Replace each opaque subexpression (matched by its AST) with a leaf name."""
    mapping = {_norm_expr(o): f"{leaf_prefix}{i}" for i, o in enumerate(opaque)}
    tree = ast.parse(expr.strip(), mode="eval")
    tr = _Opaque(mapping)
    tree = ast.fix_missing_locations(tr.visit(tree))
    bound: set[str] = set()
    free: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Lambda, ast.comprehension)):
            for a in ast.walk(n.args if isinstance(n, ast.Lambda) else n.target):
                if isinstance(a, (ast.arg, ast.Name)):
                    bound.add(a.arg if isinstance(a, ast.arg) else a.id)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            if n.id.startswith(leaf_prefix) or n.id in bound or hasattr(builtins, n.id):
                continue
            free.add(n.id)
    return OpaqueExpr(tree, sorted(tr.used), free)
