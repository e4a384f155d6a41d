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
from dataclasses import dataclass, field
from typing import Any, Callable

from . import source as S
from .salvage import salvage


@dataclass
class CallSite:
    line: int
    text: str  # the call as written, shortened
    args: list  # ast nodes
    kwargs: dict  # name -> ast node
    file: str | None = None  # another file of the project (shown relative to the root); None: the checked file
    namespace: Callable[[], dict] | None = None  # builds that file's constants afresh (project_sites)
    prelude: list = field(default_factory=list)  # (name, value node): constants of the enclosing function
    envs: list = field(default_factory=list)  # gym_envs.EnvBinding: environments the arguments read, in order
    env_notes: list = field(default_factory=list)  # how each was made (filled when they are)

    def _namespace(self, mod: types.ModuleType) -> tuple[dict, str]:
        ns = vars(mod) if self.namespace is None else self.namespace()
        where = (getattr(mod, "__file__", None) if self.file is None else self.file) or "<call site>"
        if self.envs:  # made afresh for each version (gym_envs.py); EnvUnavailable says why one cannot be
            from .gym_envs import make_env

            ns = dict(ns)
            for b in self.envs:
                if b.package is None:
                    ns[b.name] = _eval_in(b.value, ns, where)
                    continue
                ns[b.name], note = make_env(b, self.file or "this file")
                if note not in self.env_notes:
                    self.env_notes.append(note)
        if self.prelude:  # the function's constants, in a copy (a comprehension cannot see eval's locals)
            ns = dict(ns)
            for name, value in self.prelude:
                ns[name] = _eval_in(value, ns, where)
        return ns, where

    function: str | None = None  # the function the call is in, when the prelude comes from it
    defaults: frozenset = frozenset()  # names of the prelude that are parameters of that function, at their defaults
    raw: list = field(default_factory=list)  # the call's argument nodes as written (UNKNOWN ones included)
    raw_kw: dict = field(default_factory=dict)
    scope: Any = None  # the function node the call is in (None: module level)
    tree: Any = None  # the parsed file the call is in, and its path (forwarded.py follows a chain from there)
    path: str | None = None

    @property
    def place(self) -> str:
        at = f"line {self.line}" if self.file is None else f"{self.file}, line {self.line}"
        params = [(n, v) for n, v in self.prelude if n in self.defaults]
        sets = [(n, v) for n, v in self.prelude if n not in self.defaults]
        if params:
            shown = ", ".join(f"{n}={_short(ast.unparse(v))}" for n, v in params)
            at += f", with {self.function}()'s defaults `{shown}`"
        if sets:
            shown = ", ".join(f"{n} = {_short(ast.unparse(v))}" for n, v in sets)
            at += f"{' and' if params else ','} after `{shown}` in {self.function}()"
        if self.env_notes:
            at += "; " + "; ".join(self.env_notes)
        return at

    def names(self) -> set[str]:
        """Every name the arguments, the prelude and the environments read or bind."""
        nodes = [a for a in self.args + list(self.kwargs.values()) if a is not UNKNOWN]
        nodes += [v for _n, v in self.prelude] + [getattr(b, "value", None) for b in self.envs]
        out = {name for name, _v in self.prelude} | {getattr(b, "name", "") for b in self.envs}
        return out | {n.id for x in nodes if isinstance(x, ast.AST) for n in ast.walk(x) if isinstance(n, ast.Name)}

    def values(self, mod: types.ModuleType) -> tuple[tuple, dict]:
        """The arguments, evaluated afresh: in `mod` for a call of the checked file, else in the other file's
        constants (built anew for each version, so that neither sees what the other's constructor mutated)."""
        ns, where = self._namespace(mod)
        return tuple(_eval_in(a, ns, where) for a in self.args), {k: _eval_in(v, ns, where)
                                                                   for k, v in self.kwargs.items()}

    def bound(self, sig: inspect.Signature, needed: set[str], mod: types.ModuleType) -> dict[str, Any] | None:
        """The values of the parameters `needed` when this call binds to `sig`: each evaluated from its argument
        here (which must be one the verifier may evaluate), or the parameter's default; None when one is neither."""
        try:
            b = sig.bind(*range(len(self.args)), **{k: k for k in self.kwargs})
        except TypeError:
            return None
        ns, where = self._namespace(mod)
        out: dict[str, Any] = {}
        for p in needed:
            if p not in sig.parameters:
                return None
            if p in b.arguments:
                slot = b.arguments[p]
                node = self.args[slot] if isinstance(slot, int) else self.kwargs[slot]
                if node is UNKNOWN or sig.parameters[p].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                                 inspect.Parameter.VAR_KEYWORD):
                    return None
                out[p] = _eval_in(node, ns, where)
            elif sig.parameters[p].default is not inspect.Parameter.empty:
                out[p] = sig.parameters[p].default
            else:
                return None
        return out


def _short(t: str, n: int = 40) -> str:
    return t if len(t) <= n else t[: n - 3] + "..."


def _text(node: ast.Call) -> str:
    t = ast.unparse(node)
    return t if len(t) <= 80 else t[:77] + "..."


def call_sites(tree: ast.Module, name: str, every: bool = True) -> list[CallSite]:
    """Calls `name(...)` anywhere in the file whose arguments the verifier may evaluate, in source order
    (`every=False`: every call without `*`/`**`, its arguments the verifier may not evaluate left out of it)."""
    ok = S.evaluable(tree)
    names = aliases(tree, name)
    envs = _env_scope(tree, ok)
    out = []
    for node, fn in _calls(tree):
        if not (isinstance(node.func, ast.Name) and node.func.id in names):
            continue
        alias, bound = node.func.id, names[node.func.id]
        if bound is not None:  # `make = partial(Net, 3, hidden=H)`: the partial's arguments come first
            keywords = _merged(bound.keywords, node.keywords)
            read = {n.id for a in bound.args[1:] + bound.keywords for n in ast.walk(a) if isinstance(n, ast.Name)}
            if keywords is None or (fn is not None and read & _stored(fn)):
                continue  # `**`, or a name of the partial's (module-level) arguments that the function shadows
            node = ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=bound.args[1:] + node.args,
                                              keywords=keywords), node)
        site = _site(node, ok, every, fn, envs=envs.at(fn, node.lineno))
        if site is not None:
            site.tree = tree
            if alias != name:  # shown as the call it amounts to, then the alias: "`Net(3, hidden=4)` via `make = ...`"
                via = f"{alias} = {ast.unparse(bound) if bound is not None else name}"
                site.text = f"{_text(node)}` via `{_short(via, 60)}"
            out.append(site)
    out.sort(key=lambda c: c.line)
    return out


_PARTIAL = ("functools.partial", "partial")


def aliases(tree: ast.Module, name: str) -> dict[str, ast.Call | None]:
    """The names a call of `name` may be written with in the file: itself, a module-level alias bound once
    (`Model = ConvNet`), and a module-level `functools.partial(name, ...)` bound once (its Call node: its arguments
    come before the call's). `partial` counts only when the file imports it from functools and binds it once."""
    bound = S._module_bindings(tree)
    partial_ok = {"functools.partial"} if bound.get("functools") == 1 and any(
        isinstance(s, ast.Import) and any(a.name == "functools" and a.asname is None for a in s.names)
        for s in tree.body) else set()
    if bound.get("partial") == 1 and any(
            isinstance(s, ast.ImportFrom) and s.module == "functools" and s.level == 0
            and any(a.name == "partial" and a.asname is None for a in s.names) for s in tree.body):
        partial_ok.add("partial")
    out: dict[str, ast.Call | None] = {name: None}
    for st in tree.body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        alias, v = st.targets[0].id, st.value
        if bound.get(alias) != 1 or alias == name:
            continue
        if isinstance(v, ast.Name) and v.id == name:
            out[alias] = None
        elif (isinstance(v, ast.Call) and ast.unparse(v.func) in partial_ok and v.args
              and isinstance(v.args[0], ast.Name) and v.args[0].id == name):
            out[alias] = v
    return out


def _merged(first: list, then: list) -> list | None:
    """partial's keywords, overridden by the call's (as functools.partial does); None with `**`."""
    if any(k.arg is None for k in first + then):
        return None
    keys = {k.arg for k in then}
    return [k for k in first if k.arg not in keys] + list(then)


def _calls(tree: ast.Module):
    """(call, the function it is in, or None at module level) for every call of the file."""
    stack: list = [(tree, None)]
    while stack:
        node, fn = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            if isinstance(child, ast.Lambda):
                inner = child
            if isinstance(child, ast.Call):
                yield child, fn
            stack.append((child, inner))


def _stored(fn) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)} | {
        a.arg for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs}


def local_constants(fn, ok, before: int, known: frozenset = frozenset()) -> list[tuple[str, ast.expr]]:
    """The constants a function binds before line `before`: `n_classes = 10` as a statement of its own body (not
    nested in a branch or loop), the name bound nowhere else in the function (nor a parameter, global or nonlocal),
    the value one the verifier may evaluate given the module's constants and the earlier local constants."""
    if fn is None or isinstance(fn, ast.Lambda):
        return []
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for x in n.names:
                stores[x] = stores.get(x, 0) + 2
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fn:
            stores[n.name] = stores.get(n.name, 0) + 2
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                k = (a.asname or a.name).split(".")[0]
                stores[k] = stores.get(k, 0) + 2
    a = fn.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
    out: list[tuple[str, ast.expr]] = []
    known = set(known)  # names already constants (parameters at their defaults)
    for st in fn.body:
        if st.lineno >= before:
            break
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        name = st.targets[0].id
        if stores.get(name) != 1 or name in params or not ok(st.value, frozenset(known)):
            continue
        out.append((name, st.value))
        known.add(name)
    return out


def _env_scope(tree: ast.Module, ok):
    from .gym_envs import EnvScope

    return EnvScope(tree, ok)


def parameter_defaults(fn, ok) -> list[tuple[str, ast.expr]]:
    """The parameters of a factory function taken at their defaults: `def mnist(n_class=10, pretrained=None):
    model = MLP(784, n_class)` builds, when called with no arguments, `MLP(784, 10)`: a configuration the project
    defines. A parameter counts when its default is an expression the verifier may evaluate from the module's
    constants alone (as Python evaluates it, at the `def`) and the function neither rebinds it (no store, `del`,
    `global`/`nonlocal`, nor a nested function's parameter of the same spelling) nor may mutate it (an item or
    attribute store into it, a method called on it: `sizes.append(4)`); `*args`/`**kwargs` and parameters without a
    default never count."""
    if fn is None or isinstance(fn, ast.Lambda):
        return []
    a = fn.args
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stored |= _mutated_roots(fn)
    nested = {x.arg for n in ast.walk(fn) if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                              ast.Lambda))
              for x in n.args.posonlyargs + n.args.args + n.args.kwonlyargs}
    declared = {x for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    out: list[tuple[str, ast.expr]] = []
    for arg, default in pairs:
        name = arg.arg
        if name in stored or name in nested or name in declared or not ok(default, frozenset()):
            continue
        out.append((name, default))
    return out


def _mutated_roots(fn) -> set[str]:
    """Names an item or attribute store, or a method call, may mutate in `fn`: `x[0] = 1`, `x.k = 1`, `x.append(1)`."""
    out: set[str] = set()
    for n in ast.walk(fn):
        target = None
        if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
            target = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            target = n.func.value
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            out.add(target.id)
    return out


def _site(node: ast.Call, ok, every: bool, fn=None, envs: dict | None = None, **kw) -> CallSite | None:
    """The call's arguments; with `every`, None unless all are evaluable, else only the evaluable ones are kept and
    the others recorded as unknown (a parameter bound to one of them is never used). An argument may name a
    constant of the enclosing function (`local_constants`), a parameter of it at its default
    (`parameter_defaults`: the function called with no arguments), or an environment the scope makes (`envs`,
    gym_envs.py: `Agent(env)`, `Agent(n_actions=env.action_space.n)`)."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    params = parameter_defaults(fn, ok)
    pre = params + local_constants(fn, ok, node.lineno, known=frozenset(n for n, _v in params))
    local = frozenset(n for n, _v in pre)
    good = [ok(a, local) for a in node.args]
    kgood = {k.arg: ok(k.value, local) for k in node.keywords}
    made: set[str] = set()
    if envs:
        from .gym_envs import env_names

        for i, a in enumerate(node.args):
            if not good[i] and (u := env_names(a, envs, ok, local)) is not None:
                good[i] = True
                made |= u
        for k in node.keywords:
            if not kgood[k.arg] and (u := env_names(k.value, envs, ok, local)) is not None:
                kgood[k.arg] = True
                made |= u
    if every and not (all(good) and all(kgood.values())):
        return None
    args = [a if g else UNKNOWN for a, g in zip(node.args, good)]
    kwargs = {k.arg: (k.value if kgood[k.arg] else UNKNOWN) for k in node.keywords}
    used = {n.id for x in args + list(kwargs.values()) if x is not UNKNOWN for n in ast.walk(x)
            if isinstance(n, ast.Name)}
    pre = _needed(pre, used)
    if made:
        from .gym_envs import needed

        kw["envs"] = needed(envs, made)
    defaults = frozenset(n for n, _v in params) & frozenset(n for n, _v in pre)
    return CallSite(node.lineno, _text(node), args, kwargs, prelude=pre, function=getattr(fn, "name", None),
                    defaults=defaults, raw=list(node.args), raw_kw={k.arg: k.value for k in node.keywords},
                    scope=fn, **kw)


def _needed(pre: list, used: set[str]) -> list:
    """The local constants the arguments read, and those they read in turn (in order)."""
    keep: list = []
    for name, value in reversed(pre):
        if name in used:
            keep.append((name, value))
            used |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return list(reversed(keep))


class _Unknown:
    """An argument the verifier may not evaluate (a name from the command line, a loaded file)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()


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


def _sibling_module(q: str, caller: str, path: str, name: str) -> bool:
    """`mod.Name` imported by a file whose own folder holds `mod.py`, the checked file: what Python imports when the
    caller runs as a script (its folder first on sys.path), even where the folder is also a package named `mod`
    (`ddpg/__init__.py` beside `ddpg/ddpg.py`), which the project index leaves ambiguous."""
    mod, _, last = q.rpartition(".")
    return (bool(mod) and "." not in mod and last == name
            and os.path.abspath(os.path.join(os.path.dirname(caller), mod + ".py")) == path)


def project_sites(path: str, tree: ast.Module, name: str, root: str, source: str | None = None,
                  every: bool = True) -> list[CallSite]:
    """Calls of the checked file's class `name` in the project's other files whose arguments that file's constants
    make (see the module docstring), in path then line order (`every=False`: as in `call_sites`)."""
    from gradfix.analysis.project import ProjectIndex
    from gradfix.analysis.summary import summarise

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
        part = None  # salvage.Salvaged: the file parsed without its definitions that do not parse
        try:
            other = ast.parse(text)
        except SyntaxError:
            part = salvage(text)
            if part is None:
                continue
            other = part.tree
        except (ValueError, RecursionError, MemoryError):
            continue
        summary = summarise(os.path.abspath(f), text, root, other)
        if summary is None:
            continue
        ok = scope = None
        shown = os.path.relpath(f, root).replace(os.sep, "/")
        if part is not None:
            shown = f"{shown} ({part.note})"
        ns = None
        for node, fn in _calls(other):
            if not isinstance(node.func, (ast.Name, ast.Attribute)):
                continue
            last = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            q = _qualify(node.func, summary.imports)
            if q is None or (last != name and not q.endswith("." + name)):
                continue
            hit = index.resolve(q, near=os.path.abspath(f))
            if hit is None and _sibling_module(q, f, path, name):
                pass  # `ddpg/ddpg_test.py`: `from ddpg import DDPGAgent` is its sibling ddpg.py, run as a script
            elif hit is None or os.path.abspath(hit[0].path) != path or hit[1] != name:
                continue
            ok = ok or S.evaluable(other)
            scope = scope or _env_scope(other, ok)
            site = _site(node, ok, every, fn, envs=scope.at(fn, node.lineno), file=shown)
            if site is None or (part is not None and part.touches(site.names())):
                continue
            ns = ns or constants_namespace(other)
            site.namespace, site.tree, site.path = ns, other, os.path.abspath(f)
            out.append(site)
    out.sort(key=lambda c: (c.file or "", c.line))
    return out
