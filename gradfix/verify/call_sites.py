"""Constructor arguments of a unit taken from a call of it in the same file, or in another file of the project.

A module whose constructor needs arguments was `untestable` unless a fixture built it. Scripts and notebooks
usually build their model once, in the same file, from constants: `model = ConvNet(num_classes=NUM_CLASSES)`. That
call is a configuration the project really uses; the verifier builds both versions with it.

Only a call whose every argument is an expression the verifier already evaluates at load (source.evaluable:
literals, the file's constants, pure builtins and the file's pure helpers) is used; its arguments are evaluated in
each loaded version's own namespace, and must bind to the constructor's signature. The first such call in the file
(in source order) wins. A verdict reached this way is a verdict on that configuration, and its detail says which.

Projects usually define the model in one file (`model.py`) and build it in another (`train.py`:
`from model import Net` ... `net = Net(hidden=HIDDEN)`). When the file itself has no usable call, the project's
other files are searched (`project_sites`): a call whose callee resolves, through that file's imports and the
project index (gradfix/analysis/project.py), to this file's class, with arguments that file's own constants make.
The arguments are evaluated in a namespace built from that file's constant statements only (literal and computed
constants, its pure helpers, `import math/string/torch`): none of its other imports or code runs, so the checked
file is never imported as a real module. Files are taken in path order, calls in line order; the detail names the
file and line.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import types
from dataclasses import dataclass
from typing import Any, Callable

from . import source as S


@dataclass
class CallSite:
    line: int
    text: str  # the call as written, shortened
    args: list  # ast nodes
    kwargs: dict  # name -> ast node
    file: str | None = None  # another file of the project (shown relative to the root); None: the checked file
    namespace: Callable[[], dict] | None = None  # builds that file's constants afresh (project_sites)

    @property
    def place(self) -> str:
        return f"line {self.line}" if self.file is None else f"{self.file}, line {self.line}"

    def values(self, mod: types.ModuleType) -> tuple[tuple, dict]:
        """The arguments, evaluated afresh: in `mod` for a call of the checked file, else in the other file's
        constants (built anew for each version, so that neither sees what the other's constructor mutated)."""
        ns = vars(mod) if self.namespace is None else self.namespace()
        where = (getattr(mod, "__file__", None) if self.file is None else self.file) or "<call site>"
        return tuple(_eval_in(a, ns, where) for a in self.args), {k: _eval_in(v, ns, where)
                                                                   for k, v in self.kwargs.items()}


def _text(node: ast.Call) -> str:
    t = ast.unparse(node)
    return t if len(t) <= 80 else t[:77] + "..."


def call_sites(tree: ast.Module, name: str) -> list[CallSite]:
    """Calls `name(...)` anywhere in the file whose arguments the verifier may evaluate, in source order."""
    ok = S.evaluable(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        if all(ok(a) for a in node.args) and all(ok(k.value) for k in node.keywords):
            out.append(CallSite(node.lineno, _text(node), list(node.args), {k.arg: k.value for k in node.keywords}))
    out.sort(key=lambda c: c.line)
    return out


def _eval_in(node: ast.AST, ns: dict, where: str) -> Any:
    expr = ast.Expression(body=node)
    ast.fix_missing_locations(expr)
    return eval(compile(expr, where, "eval"), ns)  # noqa: S307


def _eval(node: ast.AST, mod: types.ModuleType) -> Any:
    return _eval_in(node, vars(mod), getattr(mod, "__file__", None) or "<call site>")


def constructor_args(tree: ast.Module, name: str, cls: type, mod: types.ModuleType,
                     path: str | None = None, root: str | None = None) -> tuple[tuple, dict, CallSite] | None:
    """(args, kwargs, site) of the first usable call of `name` in `tree`, evaluated in `mod`, else (with the file's
    `path` and the project `root`) of the first in another file of the project; None when none is."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    sites = call_sites(tree, name)
    for pass_ in (0, 1):
        if pass_ == 1:
            if not (path and root):
                break
            sites = project_sites(path, tree, name, root)
        for site in sites:
            try:
                args, kwargs = site.values(mod)
                sig.bind(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a constant left unset (it raised at load), or arguments that do not bind
                continue
            return args, kwargs, site
    return None


# --------------------------------------------------------------------------- calls in the project's other files

_SKIP_DIRS = {".git", "__pycache__", "node_modules", "build", "dist", ".tox", ".venv", "venv", "site-packages"}
MAX_FILES = 2000  # files looked at (their text is only searched for the name unless it occurs)
_CONST_IMPORTS = frozenset({"math", "string", "torch"})


def _project_files(root: str, limit: int = MAX_FILES) -> list[str]:
    out: list[str] = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in _SKIP_DIRS and not x.startswith(".") and not x.endswith(".egg-info"))
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".py"))
        if len(out) >= limit:
            break
    return out[:limit]


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def constants_namespace(tree: ast.Module) -> Callable[[], dict]:
    """A builder of another file's constants: its module-level literal and computed constants (each guarded: one
    that raises leaves its name unset), the pure helpers they call and `import math/string/torch`, run in order in a
    fresh namespace. Nothing else of the file runs (no other import, no class, no loop)."""
    kept, computed, _dropped = S.classify_module(tree)
    keep, comp = {id(s) for s in kept}, {id(s) for s in computed}
    pure_defs = _pure_function_names(tree)
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if id(stmt) in comp:
            body.append(S._guarded(stmt))
        elif id(stmt) not in keep:
            continue
        elif isinstance(stmt, ast.Import):
            if all(a.name.split(".")[0] in _CONST_IMPORTS and (a.asname is None or a.name in _CONST_IMPORTS)
                   for a in stmt.names):
                body.append(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            body.append(S._guarded(stmt))
        elif isinstance(stmt, ast.FunctionDef) and stmt.name in pure_defs:
            body.append(stmt)
        elif isinstance(stmt, (ast.If, ast.Try)) and not any(
                isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                for n in ast.walk(stmt)):
            body.append(S._guarded(stmt))
    code = compile(ast.Module(body=body, type_ignores=[]), "<call site constants>", "exec")

    def build() -> dict:
        ns: dict = {"__name__": "_gradfix_call_site", "__builtins__": builtins}
        exec(code, ns)  # noqa: S102 - constants, pure helpers and three imports only (above)
        return ns

    return build


def _pure_function_names(tree: ast.Module) -> frozenset:
    from .pure_calls import pure_callables

    bound = S._module_bindings(tree)
    _k, _c, _d, consts, modules = S._classify(tree, bound, frozenset())
    pure = pure_callables(tree, bound, lambda n, local, p: S._is_computed_constant(n, consts, modules, bound, p, local))
    return frozenset(pure)


def _qualify(expr: ast.expr, imports: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    head = imports.get(expr.id)
    if head is None:
        return None  # a name the file binds itself: not an import of the checked file's class
    return ".".join([head] + list(reversed(parts)))


def project_sites(path: str, tree: ast.Module, name: str, root: str, source: str | None = None) -> list[CallSite]:
    """Calls of the checked file's class `name` in the project's other files whose arguments that file's constants
    make (see the module docstring), in path then line order."""
    from gradfix.analysis.project import ProjectIndex, summarise

    path, root = os.path.abspath(path), os.path.abspath(root)
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        return []
    index = ProjectIndex(root)
    index.update(path, source if source is not None else ast.unparse(tree))
    callers: list[tuple[str, str]] = []
    for f in _project_files(root):
        if os.path.abspath(f) == path:
            continue
        text = _read(f)
        if text is None:
            continue
        if os.path.basename(f) in ("__init__.py", os.path.basename(path)):
            # re-exports (`from .net import Net`), and every file that could be imported by the same name (two
            # `model.py` in two folders: the index resolves a name only when one file is nearest)
            index.update(f, text)
        if name in text:
            callers.append((f, text))
    out: list[CallSite] = []
    for f, text in callers:
        try:
            other = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        summary = summarise(os.path.abspath(f), text, root, other)
        if summary is None:
            continue
        ok = None
        shown = os.path.relpath(f, root).replace(os.sep, "/")
        ns = None
        for node in ast.walk(other):
            if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
                continue
            last = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            q = _qualify(node.func, summary.imports)
            if q is None or (last != name and not q.endswith("." + name)):
                continue
            hit = index.resolve(q, near=os.path.abspath(f))
            if hit is None or os.path.abspath(hit[0].path) != path or hit[1] != name:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            ok = ok or S.evaluable(other)
            if not (all(ok(a) for a in node.args) and all(ok(k.value) for k in node.keywords)):
                continue
            ns = ns or constants_namespace(other)
            out.append(CallSite(node.lineno, _text(node), list(node.args), {k.arg: k.value for k in node.keywords},
                                file=shown, namespace=ns))
    out.sort(key=lambda c: (c.file or "", c.line))
    return out


def prior_build(tree: ast.Module, name: str) -> str | None:
    """The first module-level `name = Cls(...)` of the file, `Cls` a class defined there and every argument one the
    verifier may evaluate; for a setup that only converts the object (`model = model.to(DEVICE)`)."""
    ok = S.evaluable(tree)
    classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    for s in tree.body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and s.targets[0].id == name and isinstance(s.value, ast.Call)):
            continue
        call = s.value
        if not (isinstance(call.func, ast.Name) and call.func.id in classes):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        if all(ok(a) for a in call.args) and all(ok(k.value) for k in call.keywords):
            return ast.unparse(s)
    return None


def reads(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))
