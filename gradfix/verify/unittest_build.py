"""Units built inside a unittest test method: the TestCase is built, its `setUp()` runs, and `self` is that object.

A test method builds what it checks from `self` (fairseq's `tests/test_sequence_generator.py`: `setUp()` builds a
model, each test wraps it, `generator = SequenceGenerator([self.model], self.tgt_dict, beam_size=2)`, then calls
`generator.forward(self.sample)`). The statement that builds the receiver reads `self`, so it cannot run in the
module's namespace. When it is a top-level statement of a method of a `unittest.TestCase` subclass of the file, the
verifier does what the test runner does before the method: `Cls(method)`, `Cls.setUpClass()`, `setUp()`. Then, in a
copy of the module's namespace with `self` bound to that object, it runs the method's own assignments before the
call that the build and the call's arguments need (`search_strategy = search.Sampling(...)`, `sample = {...}`:
plain assignments to names, at the method's top level, nothing else of the method), in order, and takes the call's
own arguments as the input: the input the test itself passes.

A class or method that unittest skips here (`@unittest.skipUnless(torch.cuda.is_available(), ...)`) is
`untestable`, saying so; so is a `setUp()` that raises or skips.
"""

from __future__ import annotations

import ast
import unittest
from dataclasses import dataclass, field
from typing import Any

from .runtime import Untestable, fmt_exc
from .call_sites import _eval_in as _eval


# a statement of the method that is not run, and that may change what `m(x)` runs beside `m.forward(x)`
_HOOK_WORDS = ("hook", "weight_norm", "spectral_norm", "prune", "parametriz")


@dataclass
class MethodUnit:
    obj: Any  # what the setup bound to the receiver's name
    args: tuple
    kwargs: dict
    note: str  # how it was built, for the verdict's detail
    ran: list = field(default_factory=list)  # the method's statements that ran before the call


def _one(code: str) -> ast.stmt | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _call_of(code: str | None) -> ast.Call | None:
    try:
        e = ast.parse(code or "", mode="eval").body
    except SyntaxError:
        return None
    return e if isinstance(e, ast.Call) else None


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _targets(st: ast.stmt) -> set[str] | None:
    """The names a plain assignment binds (`a = ...`, `a, b = ...`, `a: T = ...`); None for any other statement."""
    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
        return {st.target.id}
    if not isinstance(st, ast.Assign):
        return None
    out: set[str] = set()
    for t in st.targets:
        elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for e in elts:
            if not isinstance(e, ast.Name):
                return None
            out.add(e.id)
    return out


def find_method(tree: ast.Module, changed: dict, setup: str, call: str | None):
    """(class node, method node, index of the setup statement, index of the statement holding the call) for the one
    changed method of a class of the file whose top level holds the setup statement and the call; None otherwise."""
    want = _one(setup)
    if want is None:
        return None
    want_d = ast.dump(want)
    call_node = _call_of(call)
    call_d = ast.dump(call_node) if call_node is not None else None
    found = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name not in changed:
            continue
        for fn in cls.body:
            if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in changed[cls.name]
                    and fn.args.args and fn.args.args[0].arg == "self"):
                continue
            at = [i for i, s in enumerate(fn.body) if ast.dump(s) == want_d]
            if len(at) != 1:
                continue
            where = None
            if call_d is not None:
                for j, s in enumerate(fn.body[at[0]:], start=at[0]):
                    if any(isinstance(n, ast.Call) and ast.dump(n) == call_d for n in ast.walk(s)):
                        where = j
                        break
            found.append((cls, fn, at[0], where))
    return found[0] if len(found) == 1 else None


def build_in_test_method(tree: ast.Module, changed: dict, mod, setup: str, recv: str, call: str | None) -> MethodUnit | None:
    """The receiver `recv` built by `setup` inside its test method (module docstring), with the call's own
    arguments; None when the setup is not a statement of a changed method of a TestCase class of the file
    (the caller builds it as before). Untestable when it is one and cannot be built."""
    hit = find_method(tree, changed, setup, call)
    if hit is None:
        return None
    cls_node, fn, k, j = hit
    cls = getattr(mod, cls_node.name, None)
    if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
        return None
    label = f"{cls_node.name}.{fn.name}"
    if j is None:
        raise Untestable(f"`{recv}` is built in the test {label}, but the call `{call}` is not in its top-level "
                         f"code after the build")
    meth = getattr(cls, fn.name, None)
    for what, skip_of in (("class", cls), ("test", meth)):
        if getattr(skip_of, "__unittest_skip__", False):
            why = getattr(skip_of, "__unittest_skip_why__", "") or "no reason given"
            raise Untestable(f"the {what} {label if what == 'test' else cls_node.name} is skipped by unittest here "
                             f"({why}), so `{recv}` built in it is not built either")
    call_node = _call_of(call)
    assert call_node is not None  # find_method matched it
    # the method's plain assignments before the call that the build and the call's arguments need, in order
    need = _names_read(fn.body[k]) | _names_read(call_node)
    plan: list[ast.stmt] = []
    for st in reversed(fn.body[:j]):
        if st is fn.body[k]:
            plan.append(st)
            continue
        names = _targets(st)
        if names and names & need:
            plan.append(st)
            need |= _names_read(st)
    plan.reverse()
    for st in fn.body[:j]:
        text = ast.unparse(st)
        if st not in plan and any(w in text for w in _HOOK_WORDS):
            raise Untestable(f"the test {label} runs `{_short(st)}` before the call, which the verifier does not run "
                             f"and which may register hooks on what it calls")
    try:
        obj = cls(fn.name)
        cls.setUpClass()
        obj.setUp()
    except unittest.SkipTest as e:
        raise Untestable(f"{cls_node.name}.setUp() skips the test here ({e}), so `{recv}` is not built")
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"{cls_node.name}.setUp() raises {fmt_exc(e)} (run to build `{recv}` for {label})")
    ns = dict(vars(mod))  # one namespace: a comprehension in the method sees `self` as it does there
    ns["self"] = obj
    where = getattr(mod, "__file__", None) or "<test method>"
    for st in plan:
        try:
            exec(compile(ast.Module(body=[st], type_ignores=[]), where, "exec"), ns)  # noqa: S102
        except Exception as e:  # noqa: BLE001
            raise Untestable(f"building `{recv}` in the test {label} (after its setUp()): `{_short(st)}` raises "
                             f"{fmt_exc(e)}")
    try:
        args = []
        for a in call_node.args:
            v = _eval(a.value if isinstance(a, ast.Starred) else a, ns, where)
            args.extend(v) if isinstance(a, ast.Starred) else args.append(v)
        kwargs: dict = {}
        for kw in call_node.keywords:
            v = _eval(kw.value, ns, where)
            kwargs.update(v) if kw.arg is None else kwargs.__setitem__(kw.arg, v)
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"the arguments of `{call}` in the test {label} cannot be evaluated after its setUp(): "
                         f"{fmt_exc(e)}")
    ran = [_short(s) for s in plan if s is not fn.body[k]]
    note = (f"`{recv}` built by `{_short(fn.body[k], 80)}` in the test {label}, with `self` a {cls_node.name} after "
            f"its setUp()" + (f" and `{'`; `'.join(ran)}` run before it" if ran else "")
            + f"; input: the call's own arguments `{_short_text(call_node)}`")
    return MethodUnit(ns.get(recv), tuple(args), kwargs, note, ran)



def _short(st: ast.AST, n: int = 60) -> str:
    t = " ".join(ast.unparse(st).split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _short_text(call: ast.Call) -> str:
    inner = ", ".join([ast.unparse(a) for a in call.args] + [
        (f"{k.arg}={ast.unparse(k.value)}" if k.arg else f"**{ast.unparse(k.value)}") for k in call.keywords])
    return inner if len(inner) <= 60 else inner[:57] + "..."
