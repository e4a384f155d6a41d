"""Methods of builtin values in a file's constants, checked when they run.

Teaching notebooks build a vocabulary from a literal corpus at module level:

    corpus = ["We always come to Paris", ...]
    def preprocess(sentence): return sentence.lower().split()
    train = [preprocess(s) for s in corpus]
    vocabulary = set(w for s in train for w in s)
    vocabulary.add("<unk>")
    word_to_ix = {w: i for i, w in enumerate(sorted(vocabulary))}
    vocab_size = len(word_to_ix)

and build the model from `vocab_size`. source.py evaluates such constants only when nothing in them can run code
with an effect outside the module; a method call (`sentence.lower()`) could, since the receiver's type is not
known from the source. Here a method call runs only through a guard that checks, when it runs, that the receiver's
type is exactly one of the builtin types below (no subclass: a subclass may override the method) and that the
method is one of that type's methods listed here, which compute a value from the receiver and the arguments and
nothing else; otherwise the guard raises, and the guarded constant is left unset (as if not run).

A top-level statement that only mutates a constant (`vocabulary.add("<unk>")`, `tokens.append("<pad>")`) runs
the same way, with the type's mutating methods; skipping it would leave the constant with a value the file never
has. For the same reason a constant that a statement the verifier does not run mutates (any other method call on
it, an item or attribute store, `del`) is not evaluated at all, nor is any constant computed from it or that it is
computed from (they may share objects).

Only source.classify_module(..., methods=True), i.e. the stripped module the verifier loads, evaluates these; the
statements are rewritten (`rewrite`) so that every such call goes through the guard, and a pure function of the
file that calls methods is called through a rewritten copy (`__gf_pure_<name>`), so the file's own function is
left as written for the code under test.
"""

from __future__ import annotations

import ast
import copy

GUARD = "__gf_method"
COPY_PREFIX = "__gf_pure_"

_STR = ("lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "join", "replace",
        "startswith", "endswith", "title", "capitalize", "casefold", "swapcase", "isalpha", "isdigit", "isalnum",
        "isspace", "islower", "isupper", "isnumeric", "isdecimal", "isidentifier", "find", "rfind", "index",
        "rindex", "count", "zfill", "center", "ljust", "rjust", "partition", "rpartition", "removeprefix",
        "removesuffix", "expandtabs")  # not encode/decode: a codec is looked up (and imported) by name
_SETS = ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint",
         "copy")
# type name -> methods that only compute a value
PURE = {
    "str": _STR,
    "bytes": ("lower", "upper", "strip", "split", "join", "replace", "startswith", "endswith", "count",
              "find", "index"),
    "list": ("index", "count", "copy"),
    "tuple": ("index", "count"),
    "dict": ("get", "keys", "values", "items", "copy"),
    "set": _SETS,
    "frozenset": _SETS,
    "int": ("bit_length", "to_bytes"),
    "float": ("is_integer", "hex"),
}
# type name -> methods that mutate the receiver and nothing else (a top-level statement of its own)
MUTATE = {
    "list": ("append", "extend", "insert", "remove", "reverse"),
    "set": ("add", "update", "discard", "remove"),
    "dict": ("update", "setdefault"),
}
PURE_NAMES = frozenset(m for ms in PURE.values() for m in ms)
MUTATE_NAMES = frozenset(m for ms in MUTATE.values() for m in ms)


def _table(spec: dict) -> str:
    return "{" + ", ".join(f"builtins.{t}: {tuple(sorted(ms))!r}" for t, ms in spec.items()) + "}"


# `builtins` is imported inside, so a module that rebinds `type` or `getattr` cannot change what the guard checks
_GUARD_SRC = f'''
def {GUARD}(obj, name, mutate, /, *args, **kwargs):
    import builtins
    allowed = {_table(MUTATE)} if mutate else {_table(PURE)}
    if name not in allowed.get(builtins.type(obj), ()):
        raise builtins.TypeError("gradfix: " + name + " of a " + builtins.type(obj).__name__ + " is not evaluated")
    return builtins.getattr(obj, name)(*args, **kwargs)
'''


def is_pure_method_call(n: ast.AST, modules: set[str]) -> bool:
    """`<expr>.m(...)` with m a listed pure method and <expr> not a module name (`np.split` is numpy's)."""
    return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in PURE_NAMES
            and not (isinstance(n.func.value, ast.Name) and n.func.value.id in modules))


def mutation(stmt: ast.stmt) -> tuple[str, ast.Call] | None:
    """(receiver, call) of a top-level `NAME.m(...)` statement with m a listed mutating method."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATE_NAMES and isinstance(f.value, ast.Name):
            return f.value.id, stmt.value
    return None


def mutated_names(stmt: ast.stmt) -> set[str]:
    """Names a statement may mutate in place: the receiver of a method call other than a listed pure one, the root
    of an item or attribute store or `del` (`x[0] = 1`, `x.k = 1`, `x.append(1)`, `del x[0]`)."""
    out: set[str] = set()

    def root(n: ast.AST) -> str | None:
        while isinstance(n, (ast.Attribute, ast.Subscript)):
            n = n.value
        return n.id if isinstance(n, ast.Name) else None

    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr not in PURE_NAMES:
            r = root(n.func.value)
            if r:
                out.add(r)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            r = root(n.value)
            if r:
                out.add(r)
    return out


def _free_names(stmt: ast.stmt) -> set[str]:
    """Names a statement reads, less its comprehensions' own variables."""
    loads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    comp = {n.id for c in ast.walk(stmt) if isinstance(c, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
            for g in c.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    return loads - comp


def poisoned(body: list[ast.stmt], computed: set[int], dropped: set[int], assigned) -> set[int]:
    """Computed statements (by id) whose value a dropped statement may mutate: the binding of a name current
    where the dropped statement mutates it, and every computed statement linked to one by reading the other's
    binding (they may share objects); and a computed statement that reads a name whose binding there is a
    dropped statement (`n = 3`, `n = len(data)`, `m = n * 2`). In file order, so that a dropped `data.sum()` on an earlier, dropped
    `data = torch.tensor(...)` does not touch a later `data = list(...)` that is computed."""
    current: dict[str, int] = {}
    links: dict[int, set[int]] = {}
    hit: set[int] = set()
    for s in body:
        if id(s) in computed:
            free = _free_names(s)
            if any(current.get(n) in dropped for n in free):
                hit.add(id(s))  # it reads a name that a statement not run has rebound: not the file's value
            deps = {current[n] for n in free if current.get(n) in computed}
            links.setdefault(id(s), set()).update(deps)
            for d in deps:
                links.setdefault(d, set()).add(id(s))
        elif id(s) in dropped:
            hit |= {current[n] for n in mutated_names(s) if current.get(n) in computed}
        for n in assigned(s):
            current[n] = id(s)
    todo = list(hit)
    while todo:
        for d in links.get(todo.pop(), ()):
            if d not in hit:
                hit.add(d)
                todo.append(d)
    return hit


def uses_methods(node: ast.AST, modules: set[str]) -> bool:
    return any(is_pure_method_call(n, modules) for n in ast.walk(node))


class _Rewrite(ast.NodeTransformer):
    def __init__(self, modules: set[str], copies: set[str]):
        self.modules, self.copies = modules, copies

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if is_pure_method_call(node, self.modules):
            return self.guarded(node, False)
        if isinstance(node.func, ast.Name) and node.func.id in self.copies:
            node.func = ast.copy_location(ast.Name(id=COPY_PREFIX + node.func.id, ctx=ast.Load()), node.func)
        return node

    @staticmethod
    def guarded(node: ast.Call, mutate: bool) -> ast.Call:
        f = node.func
        assert isinstance(f, ast.Attribute)
        args = [f.value, ast.Constant(f.attr), ast.Constant(mutate)] + node.args
        return ast.copy_location(ast.Call(func=ast.Name(id=GUARD, ctx=ast.Load()), args=args,
                                          keywords=node.keywords), node)


def rewrite(stmt: ast.stmt, modules: set[str], copies: set[str]) -> ast.stmt:
    """A copy of a computed statement whose method calls go through the guard (a mutation statement's own call
    with the mutating table) and whose calls of the file's method-calling pure functions go to their copies."""
    new = copy.deepcopy(stmt)
    m = mutation(new)
    if m is not None:
        call = m[1]
        rw = _Rewrite(modules, copies)
        call.args = [rw.visit(a) for a in call.args]
        call.keywords = [rw.visit(k) for k in call.keywords]
        new.value = _Rewrite.guarded(call, True)  # type: ignore[attr-defined]
    else:
        new = _Rewrite(modules, copies).visit(new)
    return ast.fix_missing_locations(new)


def function_copy(fn: ast.FunctionDef, modules: set[str], copies: set[str]) -> ast.FunctionDef:
    """`__gf_pure_<name>`: the function with its method calls guarded, every node on the def's line, so that no
    coverage marker of a changed statement inside the original is placed in the copy too (coverage.instrument
    marks statements by their first line)."""
    new = copy.deepcopy(fn)
    new.name = COPY_PREFIX + fn.name
    new.body = [_Rewrite(modules, copies).visit(s) for s in new.body]
    new.args = _Rewrite(modules, copies).visit(new.args)
    new = ast.fix_missing_locations(new)
    for n in ast.walk(new):
        if hasattr(n, "lineno"):
            n.lineno = n.end_lineno = fn.lineno  # type: ignore[attr-defined]
            n.col_offset, n.end_col_offset = 0, 0  # type: ignore[attr-defined]
    return new


def calls_any(node: ast.AST, names: set[str]) -> bool:
    return bool(names) and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
                               for n in ast.walk(node))


def method_functions(tree: ast.Module, pure: frozenset, modules: set[str]) -> set[str]:
    """The file's pure functions that call a method, directly or through another such function: computed
    constants call them through their copies."""
    fns = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name in pure}
    out = {n for n, f in fns.items() if uses_methods(f, modules)}
    changed = bool(out)
    while changed:
        changed = False
        for n, f in fns.items():
            if n not in out and calls_any(f, out):
                out.add(n)
                changed = True
    return out


def guarded_mutation(stmt: ast.stmt, name: str) -> ast.stmt:
    """`try: <mutation> / except Exception: del <name>`: a mutation that fails (the guard refuses the receiver's
    type, or the method raises, as `list.remove` of a missing item does) leaves its receiver unset, since the file
    never has the value it would then keep."""
    tpl = ast.parse(f"try:\n    pass\nexcept Exception:\n    try:\n        del {name}\n"
                    f"    except Exception:\n        pass\n").body[0]
    assert isinstance(tpl, ast.Try)
    tpl.body = [stmt]
    for n in ast.walk(tpl):
        if n is not stmt and hasattr(n, "lineno") and not _inside(n, stmt):
            n.lineno, n.end_lineno = stmt.lineno, stmt.end_lineno  # type: ignore[attr-defined]
            n.col_offset, n.end_col_offset = stmt.col_offset, stmt.end_col_offset  # type: ignore[attr-defined]
    return tpl


def _inside(n: ast.AST, stmt: ast.stmt) -> bool:
    return any(n is m for m in ast.walk(stmt))


def guard_def(at: ast.stmt) -> ast.stmt:
    """The guard's definition, placed (with `at`'s line numbers) before the first statement that needs it."""
    fn = ast.parse(_GUARD_SRC).body[0]
    for n in ast.walk(fn):
        if hasattr(n, "lineno"):
            n.lineno, n.end_lineno = at.lineno, at.lineno  # type: ignore[attr-defined]
            n.col_offset, n.end_col_offset = 0, 0  # type: ignore[attr-defined]
    return fn


def note(stripped) -> str:
    """The sentence a definitive verdict's detail ends with when the loaded file ran statements through the guard
    (the first few, by line), so that the reader knows which module-level values the check was built from."""
    done = getattr(stripped, "with_methods", None)
    if not done:
        return ""
    shown = ", ".join(f"{names} (line {line})" for names, line in done[:6])
    more = f" and {len(done) - 6} more" if len(done) > 6 else ""
    return (f"Module-level constants evaluated with methods of builtin values (str, list, dict, set; each call "
            f"checked when it ran; lines of the file as loaded, a notebook's cells joined): {shown}{more}.")
