"""The environment an RL call site makes: `env = gym.make("CartPole-v1")`, then `Agent(env, ...)`.

An agent builds its networks in `__init__` from the environment it is given (`env.observation_space.shape[0]`,
`env.action_space.n`), and the script that constructs it makes that environment first, with a literal id. A call
site's argument may then be such a name, or an expression over its attributes (`env.observation_space.shape`,
`env.action_space.n`, a module constant `obs_dim = env.observation_space.shape[0]` derived from it), and the
verifier makes the environment in the worker, with the project's own gym or gymnasium, to evaluate it.

Only `NAME = gym.make(<literal id>, <literal keywords>)` counts, `gym` being `import gym` or
`import gymnasium [as gym]` in that file, the name bound once in its scope (the module, its `if __name__ ==
"__main__":` block, or the calling function's own body before the call). `render_mode` is never passed on (gym 0.26
and gymnasium default to None: no window); making a classic environment downloads nothing, and the worker runs it in
its scratch directory under the CPU budget like the rest of the check. When the installed gym has retired the id's
version (`Pendulum-v0` in gym 0.26: DeprecatedEnv) the newest registered version of the same environment is made
in its place, and the verdict's detail says so. Why no environment could be made (the package is not importable
with the project's interpreter, the id is not a literal, `make` raised) is an `EnvUnavailable`, whose message says
which: the check reports it as `untestable`.

The static half uses only the standard library; `make_env` imports the package in the worker.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import io
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any

PACKAGES = ("gym", "gymnasium")


class EnvUnavailable(Exception):
    """No environment for a call site's argument; the message says why."""


@dataclass(frozen=True)
class EnvBinding:
    name: str
    value: ast.expr  # the `gym.make(...)` call, or an expression over earlier bindings
    line: int
    package: str | None = None  # set for a make: "gym" or "gymnasium"
    env_id: str | None = None  # the literal id; None for a make whose id is not a literal
    kwargs: tuple = ()  # (name, literal value) of the make, render_mode left out
    render: bool = False  # the make asked for a render_mode, which is left out
    then: tuple = ()  # attribute chains the name is rebound to right after the make: (("unwrapped",),)

    @property
    def text(self) -> str:
        t = ast.unparse(self.value)
        t = t if len(t) <= 60 else t[:57] + "..."
        return t + "".join(f"`, then `{self.name} = {self.name}.{'.'.join(c)}" for c in self.then)


def _gym_aliases(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for st in ast.walk(tree):
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.name in PACKAGES:
                    out[a.asname or a.name] = a.name
    return out


def _make(value: ast.expr, aliases: dict[str, str]) -> tuple[str, str | None, tuple, bool] | None:
    """(package, literal id or None, literal keywords, asked for a render_mode) of `gym.make(...)`, else None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "make"
            and isinstance(value.func.value, ast.Name) and value.func.value.id in aliases):
        return None
    pkg = aliases[value.func.value.id]
    ids = [a for a in value.args[:1]] + [k.value for k in value.keywords if k.arg == "id"]
    extra = value.args[1:]
    kwargs = []
    literal = len(ids) == 1 and not extra
    for k in value.keywords:
        if k.arg in ("id", "render_mode"):
            continue
        if k.arg is None or not _literal(k.value):
            literal = False
            continue
        kwargs.append((k.arg, ast.literal_eval(k.value)))
    env_id = None
    if literal and isinstance(ids[0], ast.Constant) and isinstance(ids[0].value, str):
        env_id = ids[0].value
    return pkg, env_id, tuple(kwargs), any(k.arg == "render_mode" for k in value.keywords)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _scope_statements(body: list) -> list:
    """A scope's own statements, with the body of a top-level `if __name__ == "__main__":` in their place."""
    out = []
    for st in body:
        if (isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name)
                and st.test.left.id == "__name__"):
            out.extend(st.body)
        else:
            out.append(st)
    return out


def _store_counts(nodes: list, skip_functions: bool) -> dict[str, int]:
    count: dict[str, int] = {}
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if skip_functions and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                count[n.name] = count.get(n.name, 0) + 1
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            count[n.id] = count.get(n.id, 0) + 1
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                k = (a.asname or a.name).split(".")[0]
                count[k] = count.get(k, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for x in n.names:
                count[x] = count.get(x, 0) + 2
        elif isinstance(n, ast.arg):
            count[n.arg] = count.get(n.arg, 0) + 2
        stack.extend(ast.iter_child_nodes(n))
    return count


class EnvScope:
    """The environment bindings a call at a place of the file may read (see the module docstring)."""

    def __init__(self, tree: ast.Module, ok):
        self.ok = ok
        self.aliases = _gym_aliases(tree)
        self.module = self._bindings(_scope_statements(tree.body), _store_counts(tree.body, True), None, {})\
            if self.aliases else {}

    def at(self, fn, line: int) -> dict[str, EnvBinding]:
        if not self.aliases:
            return {}
        if fn is None or isinstance(fn, ast.Lambda):
            return dict(self.module)
        stores = _store_counts(fn.body, False)
        a = fn.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
        outer = {k: v for k, v in self.module.items() if k not in stores and k not in params}
        return self._bindings([s for s in _scope_statements(fn.body) if s.lineno < line], stores, params, outer)

    def _bindings(self, body: list, stores: dict, params, known: dict) -> dict[str, EnvBinding]:
        out = dict(known)
        rebound: dict[str, int] = {}  # a make's name -> the statements that rebound it to an attribute of itself
        prev = None
        for st in body:
            last, prev = prev, st
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                continue
            name = st.targets[0].id
            if params and name in params:
                continue
            chain = _self_chain(st.value, name)
            b = out.get(name)
            if (chain is not None and b is not None and b.package is not None and last is not None
                    and _binds(last, name) and stores.get(name, 0) > 1):
                # `env = gym.make(...)` and, as the very next statement, `env = env.unwrapped`: nothing can
                # read the first value, so the binding is the make followed by that attribute
                out[name] = EnvBinding(name, b.value, b.line, b.package, b.env_id, b.kwargs, b.render,
                                       b.then + (chain,))
                rebound[name] = rebound.get(name, 0) + 1
                continue
            made = _make(st.value, self.aliases)
            if made is not None:
                if stores.get(name, 0) > 1 and not _only_rebound_after(body, st, name):
                    out.pop(name, None)  # bound again elsewhere: which value a use sees depends on where it is
                    continue
                out[name] = EnvBinding(name, st.value, st.lineno, *made)
            elif stores.get(name) == 1 and out and env_names(st.value, out, self.ok, frozenset()) is not None:
                out[name] = EnvBinding(name, st.value, st.lineno)
        gone = {name for name, n in rebound.items() if stores.get(name) != n + 1}
        removed: set[str] = set()
        while gone:  # bound again elsewhere too: drop it, and what was derived from it
            removed |= gone
            for name in gone:
                out.pop(name, None)
            gone = {k for k, b in out.items() if b.package is None
                    and any(isinstance(x, ast.Name) and x.id in removed for x in ast.walk(b.value))}
        return out


def _self_chain(value: ast.expr, name: str) -> tuple[str, ...] | None:
    """`name.a.b` -> ("a", "b"); None for anything else (a call, a subscript, another name)."""
    parts: list[str] = []
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if parts and isinstance(value, ast.Name) and value.id == name:
        return tuple(reversed(parts))
    return None


def _binds(st: ast.stmt, name: str) -> bool:
    return (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id == name)


def _only_rebound_after(body: list, st: ast.stmt, name: str) -> bool:
    """Every other binding of `name` is a `name = name.attr` right after `st` or after another such statement."""
    i = body.index(st)
    j = i + 1
    while j < len(body) and _binds(body[j], name) and _self_chain(body[j].value, name) is not None:
        j += 1
    return j > i + 1


def env_names(node: ast.expr, envs: dict[str, EnvBinding], ok, local: frozenset) -> set[str] | None:
    """The environment bindings `node` reads when it is an expression the verifier may evaluate once they are made
    (their attribute chains, `env.action_space.n`, read as values; no call on them), else None."""
    used: set[str] = set()

    class _Strip(ast.NodeTransformer):
        def visit_Attribute(self, a: ast.Attribute):
            root = a.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in envs:
                used.add(root.id)
                return ast.copy_location(ast.Name(id=root.id, ctx=ast.Load()), a)
            return self.generic_visit(a)

        def visit_Name(self, n: ast.Name):
            if n.id in envs:
                used.add(n.id)
            return n

    stripped = _Strip().visit(copy.deepcopy(node))
    if not used or not ok(stripped, local | frozenset(used)):
        return None
    return used


def needed(envs: dict[str, EnvBinding], used: set[str]) -> list[EnvBinding]:
    """The bindings `used` read, and those they read in turn, in source order."""
    want, todo = set(), list(used)
    while todo:
        n = todo.pop()
        if n in want or n not in envs:
            continue
        want.add(n)
        b = envs[n]
        if b.package is None:
            todo.extend(x.id for x in ast.walk(b.value) if isinstance(x, ast.Name) and x.id in envs)
    return sorted((envs[n] for n in want), key=lambda b: b.line)


# --------------------------------------------------------------------------- in the worker


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def _fmt(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    msg = re.sub(r"\x1b\[[0-9;]*m", "", msg)
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _successor(pkg: Any, env_id: str) -> str | None:
    """The newest registered version of the same environment (`Pendulum-v0` -> `Pendulum-v1`)."""
    m = re.fullmatch(r"(.+)-v(\d+)", env_id)
    registry = getattr(getattr(pkg, "envs", None), "registry", None)
    if m is None or registry is None:
        return None
    keys = registry.keys() if hasattr(registry, "keys") else getattr(registry, "env_specs", {}).keys()
    versions = [int(k.rsplit("-v", 1)[1]) for k in keys
                if isinstance(k, str) and k.startswith(m.group(1) + "-v") and k.rsplit("-v", 1)[1].isdigit()]
    newer = [v for v in versions if v > int(m.group(2))]
    return f"{m.group(1)}-v{max(newer)}" if newer else None


def _import_real(name: str) -> Any:
    """The installed package itself: not a stub standing in for a missing import, nor a copy in the project's
    tree loaded with its top-level code stripped (sandbox.py's finders are set aside for this import)."""
    from . import sandbox, stub_fallback

    ours = (sandbox.LocalFinder, sandbox.StubFinder, stub_fallback.FallbackFinder)
    for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        if isinstance(sys.modules[k], sandbox.StubModule) or k in sandbox.LOCAL_LOADED:
            del sys.modules[k]
    saved = list(sys.meta_path)
    sys.meta_path[:] = [f for f in saved if not isinstance(f, ours)]
    try:
        return importlib.import_module(name)
    finally:
        sys.meta_path[:] = saved


def make_env(b: EnvBinding, where: str) -> tuple[Any, str]:
    """(the environment, a note saying how it was made) for a make binding; EnvUnavailable when none can be."""
    said = f"`{b.name} = {b.text}` ({where}, line {b.line})"
    if b.env_id is None:
        raise EnvUnavailable(f"{said} makes an environment whose id (or another argument) is not a literal, so the "
                             f"verifier cannot make it")
    try:
        with _quiet():
            pkg = _import_real(b.package)
    except Exception as e:  # noqa: BLE001 - ImportError, or a package that fails while importing
        raise EnvUnavailable(f"{said} needs {b.package}, which is not importable with {sys.executable} "
                             f"({_fmt(e)}); install it in the project's environment") from None
    version = getattr(pkg, "__version__", "?")
    kwargs = dict(b.kwargs)
    try:
        with _quiet():
            env = pkg.make(b.env_id, **kwargs)
        made = b.env_id
        how = f"made in the worker ({b.package} {version})"
    except Exception as e:  # noqa: BLE001
        newer = _successor(pkg, b.env_id) if "deprecat" in (type(e).__name__ + str(e)).lower() else None
        if newer is None:
            raise EnvUnavailable(f"{said}: making it raises {_fmt(e)} ({b.package} {version})") from None
        try:
            with _quiet():
                env = pkg.make(newer, **kwargs)
        except Exception as e2:  # noqa: BLE001
            raise EnvUnavailable(f"{said}: making it raises {_fmt(e)}, and its successor {newer} raises "
                                 f"{_fmt(e2)} ({b.package} {version})") from None
        made = newer
        how = (f"made as `{newer}` in the worker: {b.package} {version} has retired `{b.env_id}` "
               f"({_fmt(e)})")
    for chain in b.then:  # `env = env.unwrapped` right after the make
        try:
            for attr in chain:
                env = getattr(env, attr)
        except Exception as e:  # noqa: BLE001
            raise EnvUnavailable(f"{said}: `{b.name}.{'.'.join(chain)}` raises {_fmt(e)}") from None
    if getattr(env, "render_mode", None) not in (None, "rgb_array", "ansi"):
        with contextlib.suppress(Exception), _quiet():
            env.close()
        raise EnvUnavailable(f"{said}: `{made}` would render to a window (render_mode {env.render_mode!r})")
    return env, f"`{b.name} = {b.text}` {how}" + (", its render_mode left out" if b.render else "")
