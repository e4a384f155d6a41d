"""A changed call's own inputs, when the module's layers do not tell its input shape.

`model_1.forward(x)` in a notebook whose `MLP` holds raw `nn.Parameter`s (no Conv/Linear/Embedding/RNN layer to read
a shape from), `x = torch.randn(batch_size, 10)` a few lines before: the input is a tensor of the shape the file gives
`x`, made by the same factory under the verifier's own seed, in the check's dtype. Only a name the call's scope (its
function, or the module's top level) binds by a plain assignment last before the call counts, its value a call of
`torch.randn` / `rand` / `zeros` / `ones` whose sizes the verifier may evaluate (literals, the module's constants,
the function's own constants), also one name of a tuple assignment (`x, mask = torch.ones(...), torch.ones(...)`)
and the factory followed by dtype conversions (`.long()`: token ids) and placements (`.to(device)`: the check runs
on the CPU); a number literal argument (`model.forward(x, mask, 13)`) is passed as it is; anything else leaves the
reason as it was.

The values differ from the script's, which changes nothing a call-form check shows: both versions get the same
tensor, and the verdict says where its shape came from.
"""

from __future__ import annotations

import ast

from . import source as S
from .call_sites import _eval_in, _short, local_constants
from .held_builds import PLACEMENTS

FACTORIES = ("randn", "rand", "zeros", "ones")
CONVERSIONS = ("long", "int", "bool", "float", "double")   # integer ones give token ids, floating ones the check's dtype
MAX_ELEMENTS = 1 << 22
_IGNORED_KEYWORDS = ("dtype", "device", "requires_grad")


def _find_call(tree: ast.Module, call_text: str, line: int) -> tuple[ast.Call, ast.AST] | None:
    """The call node (and its scope: a function or the module) whose text is `call_text`, preferring line `line`."""
    try:
        want = ast.dump(ast.parse(call_text, mode="eval").body)
    except SyntaxError:
        return None
    found = []

    def walk(node: ast.AST, scope: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
            if isinstance(child, ast.ClassDef):
                inner = child
            if isinstance(child, ast.Call) and ast.dump(child) == want:
                found.append((child, scope))
            walk(child, inner)

    walk(tree, tree)
    at_line = [f for f in found if f[0].lineno == line]
    if len(at_line) == 1:
        return at_line[0]
    return found[0] if len(found) == 1 else None


def _own_statements(scope: ast.AST) -> list[ast.stmt]:
    """Every statement of the scope, nested blocks included, not those of functions or classes defined in it."""
    out: list[ast.stmt] = []

    def walk(body: list) -> None:
        for st in body:
            out.append(st)
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(st, field, None)
                if isinstance(sub, list):
                    walk(sub)
            if isinstance(st, ast.ExceptHandler):
                walk(st.body)

    walk(getattr(scope, "body", []))
    return out


def _store_lines(scope: ast.AST, name: str) -> list[int]:
    """The lines where the scope's own code (not that of functions or classes defined in it) binds `name`."""
    lines: list[int] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if getattr(child, "name", None) == name:
                    lines.append(child.lineno)
                continue
            if isinstance(child, ast.Name) and child.id == name and not isinstance(child.ctx, ast.Load):
                lines.append(child.lineno)
            elif isinstance(child, ast.alias) and (child.asname or child.name).split(".")[0] == name:
                lines.append(getattr(child, "lineno", 0) or getattr(node, "lineno", 0))
            walk(child)

    walk(scope)
    return lines


def _binding(scope: ast.AST, name: str, line: int) -> ast.Assign | None:
    """The plain `name = ...` of the scope last before `line`, when nothing else binds `name` between it and `line`
    (nor on its line); None for a parameter of the scope."""
    args = getattr(scope, "args", None)
    if isinstance(args, ast.arguments) and name in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}:
        return None
    last = None
    for st in _own_statements(scope):
        if (st.lineno < line and isinstance(st, ast.Assign) and len(st.targets) == 1
                and _assigned_value(st, name) is not None and (last is None or st.lineno > last.lineno)):
            last = st
    if last is None:
        return None
    stores = _store_lines(scope, name)
    if stores.count(last.lineno) != 1 or any(last.lineno < n < line for n in stores):
        return None
    return last


def _assigned_value(st: ast.Assign, name: str) -> ast.expr | None:
    """What `st` binds `name` to: `name = v`, or `a, name = u, v` (a tuple display of as many plain values)."""
    target = st.targets[0]
    if isinstance(target, ast.Name):
        return st.value if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(st.value, (ast.Tuple, ast.List)) and \
            len(target.elts) == len(st.value.elts) and not any(isinstance(v, ast.Starred) for v in st.value.elts):
        for t, v in zip(target.elts, st.value.elts):
            if isinstance(t, ast.Name) and t.id == name:
                return v
    return None


def _factory(value: ast.expr) -> str | None:
    f = value.func if isinstance(value, ast.Call) else None
    if (isinstance(f, ast.Attribute) and f.attr in FACTORIES and isinstance(f.value, ast.Name)
            and f.value.id == "torch"):
        return f.attr
    return None


def _device_like(arg: ast.expr) -> bool:
    """`device`, `args.device`, `"cuda"`: an argument of `.to(...)` that names a device, not a dtype."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str) and arg.value.split(":")[0] in ("cuda", "cpu", "mps")
    name = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else ""
    return name.lower() in ("device", "dev", "cuda_device")


def _number(arg: ast.expr) -> bool:
    return isinstance(arg, ast.Constant) and type(arg.value) in (int, float)


def _converted(value: ast.expr) -> tuple[ast.expr, list[str]]:
    """`torch.ones((16, 20)).long().to(device)`: the factory call, and the dtype conversions after it in order
    (`long`); a placement (`.to(device)`, `.cuda()`, `.cpu()`: the check runs on the CPU) is left out."""
    conversions: list[str] = []
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            isinstance(value.func.value, ast.Call):
        attr = value.func.attr
        if attr in CONVERSIONS and not value.args and not value.keywords:
            conversions.append(attr)
        elif not (attr in PLACEMENTS and all(_device_like(a) for a in value.args)
                  and all(k.arg in ("non_blocking",) for k in value.keywords)):
            break
        value = value.func.value
    return value, list(reversed(conversions))


def call_inputs(tree: ast.Module, call_text: str, line: int, ns: dict, dtype, where: str) -> tuple[tuple, str] | None:
    """(the inputs, a note saying how they were made) for the positional arguments of the call `call_text`, each a
    name bound to a tensor factory with evaluable sizes as described above; else None."""
    import torch

    from .runtime import SEED_INPUT, seeded

    hit = _find_call(tree, call_text, line)
    if hit is None:
        return None
    call, scope = hit
    if not call.args or call.keywords or any(not (isinstance(a, ast.Name) or _number(a)) for a in call.args) \
            or not any(isinstance(a, ast.Name) for a in call.args):
        return None
    ok = S.evaluable(tree)
    fn = scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    pre = local_constants(fn, ok, call.lineno) if fn is not None else []
    known = frozenset(n for n, _v in pre)
    local = dict(ns)
    try:
        for n, v in pre:
            local[n] = _eval_in(v, local, where)
    except Exception:  # noqa: BLE001
        return None
    inputs, parts = [], []
    for arg in call.args:
        if _number(arg):
            inputs.append(arg.value)     # `model.forward(x, mask, 13)`: the literal as the call passes it
            continue
        st = _binding(scope, arg.id, call.lineno)
        value, conversions = _converted(_assigned_value(st, arg.id)) if st is not None else (None, [])
        kind = _factory(value) if value is not None else None
        if kind is None:
            return None
        if any(k.arg not in _IGNORED_KEYWORDS for k in value.keywords):
            return None
        if not value.args or not all(ok(a, known) for a in value.args):
            return None
        if fn is None:  # the module's top level: the sizes' names as they stand at the binding
            read = {n.id for a in value.args for n in ast.walk(a) if isinstance(n, ast.Name)}
            local.update(values_at(tree, st.lineno, ns, read, where))
        try:
            sizes = [_eval_in(a, local, where) for a in value.args]
        except Exception:  # noqa: BLE001
            return None
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, torch.Size)):
            sizes = list(sizes[0])
        if not sizes or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
            return None
        count = 1
        for s in sizes:
            count *= s
        if count > MAX_ELEMENTS:
            return None
        with seeded(SEED_INPUT):
            made = getattr(torch, kind)(*sizes, dtype=dtype)
        for c in conversions:
            made = made.to(dtype) if c in ("float", "double") else getattr(made, c)()
        inputs.append(made)
        parts.append(f"`{arg.id}` of shape {tuple(sizes)}, as `{_short(ast.unparse(st), 60)}` (line {st.lineno}) "
                     f"makes it")
    return tuple(inputs), "from the call's own argument" + ("s " if len(parts) > 1 else " ") + "; ".join(parts)


def values_at(tree: ast.Module, line: int, ns: dict, names: set[str], where: str) -> dict:
    """The values the module's top level gives `names` just before `line`, for those it binds again after `line`
    (a notebook's later cell sets `batch_size = 32` where an earlier one set 3): the plain `name = <constant
    expression>` statements of the top level before `line` replayed in order over `ns`. Names whose binding before
    `line` the verifier may not evaluate are left out (their loaded value stays)."""
    ok = S.evaluable(tree)
    later = {t.id for st in tree.body if st.lineno >= line and isinstance(st, ast.Assign)
             for t in st.targets if isinstance(t, ast.Name)}
    want = names & later
    if not want:
        return {}
    local = dict(ns)
    out: dict = {}
    for st in tree.body:
        if st.lineno >= line:
            break
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        name = st.targets[0].id
        try:
            if not ok(st.value):
                raise ValueError
            local[name] = _eval_in(st.value, local, where)
        except Exception:  # noqa: BLE001 - not a constant here: its value before `line` is unknown
            local.pop(name, None)
            out.pop(name, None)
            continue
        if name in want:
            out[name] = local[name]
    return out


def setup_line(tree: ast.Module, setup: str, before: int) -> int | None:
    """The line of the module's top-level statement that is `setup`, the last one before line `before`."""
    try:
        want = [ast.dump(s) for s in ast.parse(setup).body]
    except SyntaxError:
        return None
    if len(want) != 1:
        return None
    lines = [st.lineno for st in tree.body if st.lineno < before and ast.dump(st) == want[0]]
    return lines[-1] if lines else None


def names_read(code: str) -> set[str]:
    try:
        return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    except SyntaxError:
        return set()
