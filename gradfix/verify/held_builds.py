"""Networks a unit's setup does not build itself: one the file built before (`model = model.to(DEVICE)` only
converts it), one a plain object's `__init__` holds (`self.q = QNet(lr, dims)` in `Agent.__init__`, the agent's
arguments taken from a call of it in the file or the project, call_sites.py), and one a function builds from its
own constants (`main()`: `n_classes = 10` ... `ConvNet(output_dim=n_classes)`).

A parameter the holder rebinds, or a holder nobody calls with arguments the verifier can evaluate, is said in the
`untestable` reason; nothing else of the holder's `__init__` runs.
"""

from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass, field

from . import pure_methods as PM
from . import source as S
from .call_sites import CallSite, _eval_in, _needed, _short, _stored, call_sites, local_constants, project_sites


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


def converted_first(code: str) -> str | None:
    """The name the first statement of `code` rebinds from itself (`model = model.to(DEVICE)`), else None."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    st = body[0] if body else None
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        name = st.targets[0].id
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(st.value)):
            return name
    return None


def reads(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))


# --------------------------------------------------------------------------- a module held by a plain object


@dataclass
class HeldBuild:
    values: dict  # the holder's __init__ parameters the build reads -> their values (and `self`: its attributes)
    holder: str
    site: CallSite | None  # None when the build reads only attributes __init__ sets from no parameter
    attrs: list = field(default_factory=list)  # `self.obs_dim = ...`: the attributes of __init__ the build reads
    setup: str | None = None  # the setup to run instead, when the build's placement was left out (`placed`)
    placed: str | None = None  # `Net(size).to(device)`: the build as written, its `.to(device)` not run

    @property
    def note(self) -> str:
        names = ", ".join(sorted(k for k in self.values if k != "self" and not isinstance(self.values[k], _Holder)))
        parts = []
        if self.attrs:
            parts.append(", ".join(f"`{a}`" for a in self.attrs) + f" as {self.holder}.__init__ sets them")
        if self.site is not None and names:
            parts.append(f"{names} from `{self.site.text}` (the call of {self.holder} at {self.site.place})")
        if self.placed:
            parts.append(f"without the placement of `{self.placed}` (its device is filled in by __init__ when "
                         f"not given; the check places and converts the model itself)")
        return ", ".join(parts)


class _Holder:
    """The object under construction, as far as the build reads it: the attributes __init__ set before it."""

    def __init__(self, cls: str):
        self.__dict__["_gf_cls"] = cls

    def __getattr__(self, name: str):
        raise AttributeError(f"{self._gf_cls}.__init__ sets no `{name}` before the build (as the verifier reads it)")


def _self_attrs(cls: ast.ClassDef, init: ast.FunctionDef, build: ast.stmt, me: str,
                value: ast.expr) -> list[tuple[str, ast.expr]] | str:
    """The attributes `me.X` the build's `value` reads, with the expressions __init__ sets them to, in statement
    order (those read in turn included): each set once in the class, by a top-level `me.X = ...` of __init__ before
    the build. A reason (str) when one is not, or `me` is read otherwise (passed, called)."""
    stores: dict[str, int] = {}
    for n in ast.walk(cls):
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name):
            stores[n.attr] = stores.get(n.attr, 0) + 1
    sets: dict[str, ast.Assign] = {}
    for st in init.body:
        if st.lineno >= build.lineno:
            break
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Attribute)
                and isinstance(st.targets[0].value, ast.Name) and st.targets[0].value.id == me):
            sets[st.targets[0].attr] = st

    def reads(expr: ast.expr) -> set[str] | str:
        attrs = {n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                 and n.value.id == me}
        uses = sum(1 for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id == me)
        via = sum(1 for n in ast.walk(expr) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                  and n.value.id == me)
        called = sorted(f"{me}.{n.func.attr}()" for n in ast.walk(expr) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                        and n.func.value.id == me)
        if called:
            return f"it calls {', '.join(called)} on the object under construction"
        if uses != via:
            return f"it reads `{me}`, the object under construction"
        return attrs

    want: dict[str, ast.Assign] = {}
    todo = reads(value)
    if isinstance(todo, str):
        return todo
    todo = set(todo)
    while todo:
        x = todo.pop()
        if x in want:
            continue
        st = sets.get(x)
        if st is None or stores.get(x) != 1:
            return (f"it reads `{me}.{x}`, which {cls.name} does not set once by a plain `{me}.{x} = ...` of "
                    f"__init__ before the build")
        more = reads(st.value)
        if isinstance(more, str):
            return f"`{me}.{x} = {_short(ast.unparse(st.value))}`: {more}"
        want[x] = st
        todo |= more
    return [(x, st.value) for x, st in sorted(want.items(), key=lambda kv: kv[1].lineno)]


def _pairs(node: ast.Assign) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) of each name an assignment binds to its own expression: every target of `a = b = v`, and
    each element of `a, b = v1, v2` (a tuple or list on both sides, of the same length, no starred element)."""
    out = []
    for t in node.targets:
        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
            if len(t.elts) == len(node.value.elts) and not any(isinstance(e, ast.Starred)
                                                                for e in t.elts + node.value.elts):
                out += list(zip(t.elts, node.value.elts))
        else:
            out.append((t, node.value))
    return out


def _reads(cls: ast.ClassDef, init: ast.FunctionDef, stmt: ast.stmt, value: ast.expr, recv: str):
    """(self's name, the parameters the build `value` reads, the attributes of self it reads with their values,
    a clause saying so); None when it reads neither. Untestable (with `rebinds` set) when __init__ rebinds one of
    the parameters it reads."""
    from .runtime import Untestable

    a = init.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    me = params[0]
    read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} & set(params)
    if not read:
        return None
    where = f"`{recv}` is built in {cls.name}.__init__ from its parameter(s) {', '.join(sorted(read))}"
    attrs: list[tuple[str, ast.expr]] = []
    if me in read:
        found = _self_attrs(cls, init, stmt, me, value)
        if isinstance(found, str):
            raise Untestable(f"{where}: {found}")
        attrs = found
        read = (read | {n.id for _x, v in attrs for n in ast.walk(v) if isinstance(n, ast.Name)
                        and isinstance(n.ctx, ast.Load)} & set(params)) - {me}
        shown = ", ".join(sorted(read) + [f"{me}.{x}" for x, _v in attrs])
        where = f"`{recv}` is built in {cls.name}.__init__ from {shown}"
    rebound = sorted({n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                      and n.id in read})
    if rebound or any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(init)):
        u = Untestable(f"{where}, and __init__ rebinds {', '.join(rebound) or 'a name'} before or after")
        u.rebinds = bool(rebound)  # type: ignore[attr-defined]
        raise u
    return me, read, attrs, where


def held_build(tree: ast.Module, setup: str, recv: str, mod: types.ModuleType, path: str | None,
               root: str | None) -> HeldBuild | None:
    """A setup `attr = Cls(lr, dims=input_dims)` copied from `self.attr = Cls(lr, dims=input_dims)` in the
    `__init__` of a plain class of the file (an agent holding its network) reads that `__init__`'s parameters, not
    module names, and the attributes it set before (`self.obs_dim = env.observation_space.shape[0]`, resolved by
    `_self_attrs` and evaluated from the parameters). The parameters' values come from the first call of the holder
    class, in the file or in the project's other files, that gives each of them an argument the verifier may
    evaluate (or leaves it to its default), an environment the caller makes included (gym_envs.py); no parameter
    the build reads may be rebound in `__init__`. None when the setup reads no parameter nor attribute; Untestable
    when it does and no call gives them."""
    from .gym_envs import EnvUnavailable
    from .runtime import Untestable, fmt_exc

    try:
        st = ast.parse(setup)
    except SyntaxError:
        return None
    if not (len(st.body) == 1 and isinstance(st.body[0], ast.Assign) and len(st.body[0].targets) == 1
            and isinstance(st.body[0].targets[0], ast.Name) and st.body[0].targets[0].id == recv):
        return None
    rhs = ast.dump(st.body[0].value)
    holders = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "__init__" and fn.args.args):
                continue
            me = fn.args.args[0].arg
            for node in ast.walk(fn):
                if not isinstance(node, ast.Assign):
                    continue
                for target, value in _pairs(node):  # `self.q = Q(...)`, `self.q, self.t = Q(...), Q(...)`
                    if (ast.dump(value) == rhs and isinstance(target, ast.Attribute) and target.attr == recv
                            and isinstance(target.value, ast.Name) and target.value.id == me):
                        holders.append((cls, fn, node, value))
    if len(holders) != 1:
        return None
    cls, init, stmt, value = holders[0]
    placed = None
    try:
        found = _reads(cls, init, stmt, value, recv)
    except Untestable as u:
        # `Net(size).to(device)`, `device` filled in when None (`if device is None: device = torch.device(...)`):
        # when only the placement reads what __init__ rebinds, the model is built without it (the check places
        # and converts the model itself)
        bare = _unplaced(value)
        if bare is value or not getattr(u, "rebinds", False):
            raise
        found = _reads(cls, init, stmt, bare, recv)
        placed, value, setup = ast.unparse(value), bare, f"{recv} = {ast.unparse(bare)}"
    if found is None and placed is None:
        return None
    me, read, attrs, where = found if found is not None else (init.args.args[0].arg, set(), [], "")
    holder = getattr(mod, cls.name, None)
    try:
        sig = inspect.signature(holder)
    except (TypeError, ValueError):
        return None
    found_values: tuple[dict, CallSite | None] | None = ({}, None) if not read else None
    env_reasons: list[str] = []
    if found_values is None:
        from .forwarded import forwarded_values

        sites = call_sites(tree, cls.name, every=False)
        for site in sites:
            site.path = path
        if path and root:
            sites = sites + project_sites(path, tree, cls.name, root, every=False)
        for site in sites:
            try:
                values = site.bound(sig, read, mod)
                if values is None and (chain := forwarded_values(site, sig, read, mod, root)) is not None:
                    values, site = chain  # `Worker(i, env)` in A3CAgent.__init__, A3CAgent built by the script
            except EnvUnavailable as e:  # the call passes an environment the verifier cannot make: say why
                if str(e) not in env_reasons:
                    env_reasons.append(str(e))
                continue
            except Exception:  # noqa: BLE001 - a constant left unset, a name of the other file that is not one
                continue
            if values is not None:
                found_values = (values, site)
                break
    if found_values is None:
        if env_reasons:
            raise Untestable(f"{where}, and the call of {cls.name} that gives them passes an environment: "
                             f"{env_reasons[0]}")
        raise Untestable(f"{where}, and no call of {cls.name} in the file{' or the project' if root else ''} gives "
                         f"them arguments the verifier can evaluate (constants only, or an environment made by "
                         f"`gym.make` with a literal id)")
    values, site = found_values
    values = dict(values)
    if attrs:
        obj = _Holder(cls.name)
        ns = dict(vars(mod))
        ns.update(values)
        ns[me] = obj
        src = getattr(mod, "__file__", None) or "<__init__>"
        for x, v in attrs:
            try:
                obj.__dict__[x] = _eval_in(v, ns, src)
            except Exception as e:  # noqa: BLE001
                raise Untestable(f"{where}: `{me}.{x} = {_short(ast.unparse(v))}` raises {fmt_exc(e)}") from None
        values[me] = obj
    out = HeldBuild(values, cls.name, site, [f"{me}.{x}" for x, _v in attrs])
    if placed is not None:
        out.setup, out.placed = setup, placed
    return out


PLACEMENTS = ("to", "cuda", "cpu")


def _unplaced(value: ast.expr) -> ast.expr:
    """`Net(size)` of `Net(size).to(device)` / `.cuda(device)` / `.cpu()` (a chain of them), else `value` itself."""
    bare = value
    while (isinstance(bare, ast.Call) and isinstance(bare.func, ast.Attribute) and bare.func.attr in PLACEMENTS
           and isinstance(bare.func.value, ast.Call)):
        bare = bare.func.value
    return bare


def function_build(tree: ast.Module, setup: str, mod: types.ModuleType) -> tuple[dict, str, str] | None:
    """A setup `model = ConvNet(output_dim=n_classes)` copied from a statement of a function (`main()`) that reads
    constants of that function (`n_classes = 10` before it, `local_constants`): (their values, a note naming them,
    the statement to run with them: the setup, or the same factory call as that function makes it). None when the
    setup is no such statement, or reads names the function does not make constants."""
    try:
        st = ast.parse(setup)
    except SyntaxError:
        return None
    if not (len(st.body) == 1 and isinstance(st.body[0], ast.Assign)):
        return None
    want = ast.dump(st.body[0])
    ok = S.evaluable(tree)
    found, alike = [], []
    shape = _call_shape(st.body[0])
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [(fn, s) for s in fn.body if isinstance(s, ast.Assign) and ast.dump(s) == want]
            alike += [(fn, s) for s in fn.body if isinstance(s, ast.Assign) and ast.dump(s) != want
                      and shape is not None and _call_shape(s) == shape
                      and _same_constant_arguments(st.body[0].value, s.value, ok)]
    # the same statement in several functions (`model = build_model(vocab, dim)` in `main()` and in `predict()`, where
    # `vocab` is read from a file): the first whose names are all constants of that function builds it; then the
    # same call with other arguments (`model = build_model(vocab, sentenct_length, dim)` in `main()`): the same
    # factory, given the values that function gives it
    guarded = None
    for fn, stmt, methods in [(f, x, False) for f, x in found + alike] + [(f, x, True) for f, x in found + alike]:
        rewrite = None
        if methods:  # then with methods of builtin values (`vocab.get(c)`, `chars.replace(p, "")`), guarded
            if guarded is None:
                guarded = S.evaluable_guarded(tree)
                if not (PM.GUARD in vars(mod)):
                    return None  # the loaded module defines no guard: nothing it ran needs one
            ok, rewrite = guarded
        from .local_builds import NotAModule, evaluate, with_builds

        pre, builds = with_builds(fn, ok, stmt, local_constants(fn, ok, stmt.lineno))  # `flows = [IAF(...) ...]`
        read = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        pre = _needed(pre, set(read))
        if not pre or (read - {n for n, _v in pre}) & _stored(fn):
            continue  # another name of the setup is a local of the function: not one the module gives
        ns = dict(vars(mod))
        where = getattr(mod, "__file__", None) or "<setup>"
        values = {}
        try:
            for name, value in pre:
                if name in builds:
                    ns[name] = values[name] = evaluate(rewrite(value) if rewrite else value, ns, where)
                    continue
                ns[name] = values[name] = _eval_in(rewrite(value) if rewrite else value, ns, where)
        except NotAModule:
            continue  # a local build whose callee is a factory or a plain class: not one this reads
        except Exception:  # noqa: BLE001 - the guard refused a receiver, or the method raised: not this one
            if rewrite is None:
                raise
            continue
        sets = ", ".join(f"{n} = {_short(ast.unparse(v))}" for n, v in pre)
        if rewrite is not None:
            sets += " (methods of builtin values each checked when it ran)"
        if ast.dump(stmt) != want:  # the same factory called with that function's own names: built that way
            return values, (f"as {fn.name}() builds it, by `{_short(ast.unparse(stmt))}` (line {stmt.lineno}, the "
                            f"same call with that function's arguments), with `{sets}` set before it there"), \
                ast.unparse(stmt)
        return values, f"with `{sets}` set before it in {fn.name}()", setup
    return None


def _same_constant_arguments(setup: ast.Call, other: ast.Call, ok) -> bool:
    """Whether `other` passes the very arguments `setup` passes wherever the setup's argument is a constant
    expression (`enabled=True`, `dim=3`): only the names the setup's own function gives (`flow`) may come from
    the other function. `MixedPrecisionFlow(flow, enabled=True)` is not built as `(flow, enabled=False)`."""
    pairs = list(zip(setup.args, other.args))
    theirs = {k.arg: k.value for k in other.keywords}
    pairs += [(k.value, theirs.get(k.arg)) for k in setup.keywords]
    return all(b is not None and (not ok(a, frozenset()) or ast.dump(a) == ast.dump(b)) for a, b in pairs)


def _call_shape(stmt: ast.Assign) -> tuple | None:
    """`model = build_model(a, b, c)`: (its target, the callee, the number of positional arguments, the keyword
    names), for a single plain name target and a callee that is a name or a dotted name; else None."""
    if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    while isinstance(f, ast.Attribute):
        f = f.value
    if not isinstance(f, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    return (stmt.targets[0].id, ast.dump(call.func), len(call.args), tuple(sorted(k.arg for k in call.keywords)))
