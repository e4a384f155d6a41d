"""Receivers a setup cannot build by running its own statement alone, in two forms scripts often take.

- Built in the script's `if __name__ == "__main__":` block, from names that block sets to constants (`input_layer =
  28 * 28` ... `net = MLP(input_layer, out_layer)`), the class a project module's (`from network_nn import MLP`):
  `guard_build` gives that statement and the constants' values. Only a class (an `nn.Module` subclass, checked on
  the loaded module) called with arguments the verifier may evaluate counts; nothing else of the block runs.
  `guard_setup` does the same for a setup that is itself a statement of the block (`model = Seq(vocab, hidden)
  .to(device)`, then `model.forward(...)` there): the block's constants it reads, its placement left to the check.
- Placed on a device that the skipped code computes (`model = Flow(...).to(device)`, `device = torch.device(...)`
  set in `main()`): `unplaced_setup` leaves the placement out when the missing name is read there and nowhere else
  of the setup. The check places and converts the module itself (the CPU, its own dtype), so leaving `.to(device)`
  out changes nothing it compares, unless the class overrides the placement methods (`overrides_placement`), which
  gives `untestable`.
"""

from __future__ import annotations

import ast
import types

from . import source as S
from .call_sites import _eval_in, _needed, _short, _stored, local_constants
from .held_builds import PLACEMENTS, _unplaced


def main_guards(tree: ast.Module) -> list[ast.If]:
    """The module's top-level `if __name__ == "__main__":` blocks."""
    out = []
    for st in tree.body:
        t = st.test if isinstance(st, ast.If) else None
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            sides = [t.left, t.comparators[0]]
            if (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
                    and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)):
                out.append(st)
    return out


def _as_function(guard: ast.If) -> ast.FunctionDef:
    """The block as a function without parameters, so that its constants are found as a function's are."""
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    fn = ast.FunctionDef(name="__main__", args=args, body=guard.body, decorator_list=[], returns=None,
                         type_comment=None)
    fn.lineno = guard.lineno
    return fn


def _callee(func: ast.expr, mod: types.ModuleType):
    """What `Cls` / `pkg.Cls` names in the loaded module, else None."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in vars(mod):
        return None
    obj = vars(mod)[func.id]
    for p in reversed(parts):
        if not isinstance(obj, types.ModuleType) or not hasattr(obj, p):
            return None
        obj = getattr(obj, p)
    return obj


def guard_build(tree: ast.Module, name: str, mod: types.ModuleType, before: int) -> tuple[str, dict, str] | None:
    """(the statement, the block's constants it reads with their values, a note) for the first `name = Cls(...)` of
    a `__main__` block before line `before`, `Cls` an nn.Module class of the loaded module and every argument one the
    verifier may evaluate given the module's and the block's constants; else None."""
    import torch.nn as nn

    ok = S.evaluable(tree)
    for guard in main_guards(tree):
        fn = _as_function(guard)
        for st in guard.body:
            if st.lineno >= before:
                break
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and st.targets[0].id == name and isinstance(st.value, ast.Call)):
                continue
            call = st.value
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in _stored(fn):
                return None  # the block rebinds the class's name: not the loaded module's class
            if _hooks_after(guard, st.lineno, before):
                return None  # a hook added to what the block built would be missed by a build of the statement alone
            cls = _callee(call.func, mod)
            if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
                return None
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            pre = local_constants(fn, ok, st.lineno)
            known = frozenset(n for n, _v in pre)
            args = list(call.args) + [k.value for k in call.keywords]
            if not all(ok(a, known) for a in args):
                return None
            read = {n.id for a in args for n in ast.walk(a) if isinstance(n, ast.Name)}
            if (read - known) & _stored(fn):
                return None  # another name is one the block sets by code the verifier does not run
            pre = _needed(pre, set(read))
            values, sets = _constants_of(pre, mod)
            note = (f"`{name}` built by `{_short(ast.unparse(st), 60)}` as the `__main__` block builds it (line "
                    f"{st.lineno})" + (f", with `{sets}` set before it there" if sets else "") + ".")
            return ast.unparse(st), values, note
    return None


def guard_setup(tree: ast.Module, setup: str, mod: types.ModuleType, before: int) -> tuple[dict, str, str] | None:
    """(values, note, the setup) as `held_builds.function_build` gives them, when the setup is a `name = ...` statement of a `__main__` block before line `before`
    (`model = EncoderDecoder(hidden_size, n_in, n_out).to(device)`) that reads names the block sets to constants
    before it (`hidden_size = 256`): those names' values, for the setup to run with. None when the setup is not
    such a statement, reads nothing of the block, or reads a name the block sets otherwise (a parsed argument, a
    loaded file)."""
    try:
        want = ast.dump(ast.parse(setup.strip()).body[0])
    except (SyntaxError, IndexError, ValueError):
        return None
    ok = S.evaluable(tree)
    for guard in main_guards(tree):
        fn = _as_function(guard)
        for st in guard.body:
            if st.lineno >= before:
                break
            if not isinstance(st, ast.Assign):
                continue
            bare = _unplaced(st.value)   # `Tagger(vocab, hidden)` of `... .to(device)`: the check places it itself
            if want not in (ast.dump(st), ast.dump(ast.Assign(targets=st.targets, value=bare))):
                continue
            read = {n.id for n in ast.walk(bare) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            block = read & _stored(fn)
            if not block:
                return None
            if _hooks_after(guard, st.lineno, before):
                return None
            pre = local_constants(fn, ok, st.lineno)
            if block - {n for n, _v in pre}:
                return None  # the block sets one of them by code the verifier does not run
            values, sets = _constants_of(_needed(pre, set(read)), mod)
            return values, f"run as the `__main__` block runs it (line {st.lineno}), with `{sets}` set before it there", \
                setup
    return None


def _constants_of(pre: list, mod: types.ModuleType) -> tuple[dict, str]:
    """The values of the block's constants `pre` ((name, value) in order, each over the loaded module's names and
    the earlier ones), and how the note names them."""
    ns = dict(vars(mod))
    values = {}
    where = getattr(mod, "__file__", None) or "<__main__>"
    for n, v in pre:
        ns[n] = values[n] = _eval_in(v, ns, where)
    return values, ", ".join(f"{n} = {_short(ast.unparse(v))}" for n, v in pre)


def _hooks_after(guard: ast.If, start: int, end: int) -> bool:
    """Whether the block calls anything hook-like (skipped_hooks.hook_like: `register_forward_hook`, `weight_norm`,
    `prune.l1_unstructured`, `register_parametrization`) between lines `start` and `end`."""
    from .skipped_hooks import hook_like

    return any(hook_like(node) and start <= node.lineno <= end for node in ast.walk(guard))


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def unplaced_setup(setup: str, missing: str | None) -> tuple[str, str] | None:
    """(the setup with the placements that read `missing` left out, the first placement left out) when `missing`
    is read only in the arguments of a trailing `.to(...)` / `.cuda(...)` of a statement's value (`x = Net().to(d)`,
    `x = x.to(d)`); else None."""
    if not missing:
        return None
    try:
        tree = ast.parse(setup)
    except SyntaxError:
        return None
    first = None
    for st in tree.body:
        if not isinstance(st, ast.Assign):
            continue
        value = st.value
        while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
               and value.func.attr in PLACEMENTS):
            if not any(_reads(a, missing) for a in list(value.args) + [k.value for k in value.keywords]):
                break
            first = first or ast.unparse(value)
            value = value.func.value
        st.value = value
    if first is None or _reads(tree, missing):
        return None
    return ast.unparse(tree), first


def overrides_placement(obj) -> bool:
    """Whether the module's class defines its own placement (`to`, `cuda`, `cpu`, `_apply`)."""
    import torch.nn as nn

    return any(getattr(type(obj), m, None) is not getattr(nn.Module, m) for m in PLACEMENTS + ("_apply",))
