"""Hook-like calls a check does not run: why a GF305 build may lack what the file's own object carries.

`m(x)` and `m.forward(x)` differ exactly by the hooks (and hook-based wrappers: weight_norm, spectral_norm,
parametrizations, pruning, FSDP2's fully_shard) on `m` and its submodules. The check builds `m` from one statement
(a top-level build, a call site, the `__main__` block, a holder's or a function's build) and compares the two calls
on that build; a hook the file attaches elsewhere (a helper the skipped module-level code calls, `m.apply(fn)`, a
pruning call, the `__main__` block, the file the class comes from) is not on it, and `equivalent` there says
nothing about the file's object. `skipped_hooks` lists those calls; checks_forward.py turns an `equivalent` into
`untestable` naming the first. Stdlib `ast` only.

A hook-like call counts as run by the check when it is one of the setup's own statements (the rule adds the
registrations of the same scope), when an nn.Module class's `__init__` registers it on itself (`self....`, or on a
module it constructs there: `self.fc = weight_norm(nn.Linear(...))`), which every build of the class runs, or when it
is a tensor hook (`x.register_hook`) inside a `forward`, which both calls run. Any other is skipped.
"""

from __future__ import annotations

import ast
import os
from collections import Counter

HOOKING = ("hook", "weight_norm", "spectral_norm", "parametriz", "prune", "fully_shard")
TENSOR_HOOKS = ("register_hook", "register_post_accumulate_grad_hook")


def _chain(func: ast.expr) -> tuple[list[str], ast.expr]:
    """The names of `a.b.c` (innermost last) and its root expression."""
    names = []
    while isinstance(func, ast.Attribute):
        names.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        names.append(func.id)
    return names, func


def _hookish(name: str) -> bool:
    return any(h in name.lower() for h in HOOKING)


def hook_aliases(tree: ast.AST) -> frozenset:
    """Names the file imports from a hook-like module (`from torch.nn.utils.prune import l1_unstructured`,
    `from torch.nn.utils.parametrizations import orthogonal`, `import torch.nn.utils.prune as P`)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _hookish(node.module or ""):
            out.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.asname for a in node.names if a.asname and _hookish(a.name))
    return frozenset(out)


def hook_like(node: ast.AST, aliases: frozenset = frozenset()) -> bool:
    """Whether `node` is a call of anything hook-like (`register_forward_hook`, `weight_norm`, `prune.l1_unstructured`,
    `register_parametrization`, a name imported from such a module), or passes one (`model.apply(weight_norm)`)."""
    if not isinstance(node, ast.Call):
        return False
    for f in [node.func] + [a for a in node.args if isinstance(a, (ast.Name, ast.Attribute))]:
        names, _root = _chain(f)
        if any(_hookish(n) for n in names) or (names and names[-1] in aliases):
            return True
    return False


def _text(node: ast.AST) -> str:
    t = ast.unparse(node)
    return t if len(t) <= 70 else t[:67] + "..."


def _module_classes(tree: ast.Module) -> set[str]:
    """Classes of the file that subclass a `...Module` (directly or through another such class of the file)."""
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, c in classes.items():
            if name in found:
                continue
            for b in c.bases:
                names, _r = _chain(b)
                if names and (names[0] == "Module" or names[0] in found):
                    found.add(name)
                    changed = True
                    break
    return found


def _owned(node: ast.Call) -> bool:
    """Registered on the module itself or on one it constructs: `self.x.register_...`, `weight_norm(self.fc)`,
    `weight_norm(nn.Linear(...))`."""
    func = node.func
    if isinstance(func, ast.Attribute):
        _n, root = _chain(func.value)
        if isinstance(root, ast.Name) and root.id == "self":
            return True
    if node.args:
        first = node.args[0]
        if isinstance(first, ast.Call):
            return True
        _n, root = _chain(first)
        return isinstance(root, ast.Name) and root.id == "self"
    return False


def _run_by_build(node: ast.Call, where: list[ast.AST], modules: set[str]) -> bool:
    """`where`: the enclosing class and function definitions, outermost first."""
    fns = [w for w in where if isinstance(w, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not fns:
        return False
    inner = fns[-1]
    names, _root = _chain(node.func)
    if inner.name == "forward" and names and names[0] in TENSOR_HOOKS:
        return True  # a tensor's hook, set by the forward that both calls run
    owner = where[where.index(inner) - 1] if where.index(inner) else None
    return (inner.name == "__init__" and isinstance(owner, ast.ClassDef) and owner.name in modules
            and _owned(node))


def _fresh_per_test(cls: ast.ClassDef) -> set[str]:
    """`self.X` that a TestCase's `setUp` sets from a call: made again for every test method."""
    out = set()
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "setUp":
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                    out.update(t.attr for t in st.targets if isinstance(t, ast.Attribute)
                               and isinstance(t.value, ast.Name) and t.value.id == "self")
    return out


def _other_test(node: ast.Call, where: list[ast.AST], at: int | None) -> bool:
    """Registered in another test method of a TestCase, on an object that method makes (a local name) or that
    `setUp` makes afresh for each test (`self.net`): never the object the test at line `at` builds."""
    if at is None or len(where) < 2:
        return False
    cls, fn = where[-2], where[-1]
    if not (isinstance(cls, ast.ClassDef) and isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")
            and any(_chain(b)[0][:1] and _chain(b)[0][0].endswith("TestCase") for b in cls.bases)):
        return False
    if fn.lineno <= at <= (fn.end_lineno or fn.lineno):
        return False
    target = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr.startswith("register") \
        else (node.args[0] if node.args else None)
    if target is None:
        return False
    names, root = _chain(target)
    if not isinstance(root, ast.Name):
        return False
    if root.id == "self":
        return len(names) >= 2 and names[-2] in _fresh_per_test(cls)
    local = {t.id for st in ast.walk(fn) if isinstance(st, ast.Assign) for t in st.targets if isinstance(t, ast.Name)}
    return root.id in local


def skipped_hooks(tree: ast.Module, ran: str = "", at: int | None = None) -> list[tuple[int, str]]:
    """(line, call) of each hook-like call of `tree` that the check does not run; `ran`: the code it ran (the
    setup), whose hook-like calls count once each; `at`: the finding's line (another test method's own objects are
    not its)."""
    aliases = hook_aliases(tree)
    covered: Counter = Counter()
    try:
        covered.update(ast.unparse(n) for n in ast.walk(ast.parse(ran)) if hook_like(n, aliases))
    except SyntaxError:
        pass
    modules = _module_classes(tree)
    out: list[tuple[int, str]] = []

    def visit(node: ast.AST, where: list[ast.AST]) -> None:
        if hook_like(node, aliases) and not _run_by_build(node, where, modules) and not _other_test(node, where, at):
            text = ast.unparse(node)
            if covered[text] > 0:
                covered[text] -= 1
            else:
                out.append((node.lineno, _text(node)))
        inner = where + [node] if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else where
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, [])
    return sorted(out)


def _imported_files(tree: ast.Module, path: str, root: str) -> list[str]:
    """The project's files this file imports from (`from nets import Head`, `import utils.hooks`, `from . import x`),
    found beside the file or under the project root."""
    here = os.path.dirname(os.path.abspath(path))
    out: list[str] = []

    def add(base: str, dotted: str) -> None:
        stem = os.path.join(base, *dotted.split(".")) if dotted else base
        for cand in (stem + ".py", os.path.join(stem, "__init__.py")):
            cand = os.path.abspath(cand)
            if os.path.isfile(cand) and cand != os.path.abspath(path) and cand not in out:
                out.append(cand)

    bases = [here] + ([os.path.abspath(root)] if root else [])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                add(base, node.module or "")
                for a in node.names:
                    add(base, f"{node.module}.{a.name}" if node.module else a.name)
            else:
                for base in bases:
                    add(base, node.module or "")
                    for a in node.names:
                        add(base, f"{node.module}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                for base in bases:
                    add(base, a.name)
    return out


def skipped_hook(tree: ast.Module, ran: str, path: str | None, root: str | None, at: int | None = None) -> str | None:
    """The first hook-like call the check does not run, in the file or a project file it imports from, as
    "`call` at line N" (`of other.py`), with how many more; None when there is none."""
    found = [(ln, t, None) for ln, t in skipped_hooks(tree, ran, at)]
    if path:
        for f in _imported_files(tree, path, root or ""):
            try:
                with open(f, encoding="utf-8") as fh:
                    text = fh.read()
                if not any(h in text.lower() for h in HOOKING):
                    continue
                other = ast.parse(text)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                continue
            shown = os.path.relpath(f, root) if root else os.path.basename(f)
            found += [(ln, t, shown) for ln, t in skipped_hooks(other)]
    if not found:
        return None
    ln, t, where = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"`{t}` at line {ln}" + (f" of {where}" if where else "") + more
