"""A training loop in module-level code (a script, or a notebook's cells joined as one module),
read from the file and run as the script runs it: the file's own module-level statements build what
the loop's step reads (model, loss function, optimizer), and one iteration of the loop runs on a
synthetic batch shaped for the model. The loop header and the data loader are not run.

`extract` (stdlib ast only) finds the step; `build` runs the setup; `run_step` runs one iteration,
snapshotting the gradients after backward(). Anything the file does not build itself (a model made
in an earlier notebook cell that is not in the file, an import from skipped code) is `Untestable`
with the name and the line that needs it.
"""
from __future__ import annotations

import ast
import builtins
import copy
import difflib
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn as nn

from .runtime import BATCH, SEED_BUILD, SEED_INPUT, Untestable, fmt_exc, seeded

LOOPS = (ast.For, ast.While, ast.AsyncFor)
# Method calls on a needed name that set it up in place (`model.to(device)`, `model.train()`); other
# calls (`model.load_state_dict(torch.load(path))`, `torch.manual_seed(0)`) are not run.
SETUP_METHODS = frozenset({"to", "cuda", "cpu", "double", "float", "train", "eval", "apply", "requires_grad_"})
GRAD_OPS = frozenset({"clip_grad_norm_", "clip_grad_value_", "unscale_", "zero_grad"})


@dataclass
class Step:
    loop: ast.For                      # the innermost loop around the finding
    setup: list[ast.stmt]              # module-level statements the verifier's filter skips, run first
    preamble: list[ast.stmt]           # statements of enclosing loops' bodies before the inner loop
    outer_names: list[str]             # enclosing loops' targets (bound to 0)
    before: list[ast.stmt]             # the iteration up to and including backward()
    after: list[ast.stmt]              # after backward() up to and including the optimizer's step()
    optimizer: str
    loss: str | None                   # the name backward() is called on
    scaler: str | None                 # `scaler` of `scaler.scale(loss).backward()`
    index: str | None                  # `batch_idx` of `enumerate(loader)`
    start: int                         # enumerate's start
    batch: ast.expr                    # the target the batch is bound to
    leaves: dict = field(default_factory=dict)   # batch path (tuple of keys) -> shape kind ("tensor")
    structure: Any = None              # how to assemble the batch from its leaves
    model_calls: list = field(default_factory=list)  # (name, batch leaf of each positional argument)
    lines: set = field(default_factory=set)       # lines of the statements that run

    def describe_setup(self) -> str:
        if not self.setup:
            return "no module-level statement beyond imports, definitions and constants"
        lines = sorted({s.lineno for s in self.setup})
        many = len(lines) > 1
        return f"the file's own statement{'s' if many else ''} at line{'s' if many else ''} {', '.join(map(str, lines))}"


# --------------------------------------------------------------------------- names


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _bound(node: ast.AST) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    return out


_BLOCKS = (ast.With, ast.AsyncWith, ast.If, ast.Try)


def _free(stmts: list[ast.stmt], bound: set[str] | None = None, free: dict[str, int] | None = None) -> dict[str, int]:
    """Names the statements read before (or without) binding them, with the first line reading each.
    The body of a `with`, `if` or `try` is read in order; comprehension and lambda variables are local."""
    bound = set() if bound is None else bound
    free = {} if free is None else free

    def note(node: ast.AST, line_of: ast.AST) -> None:
        local: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.comprehension):
                local |= _bound(n.target)
            elif isinstance(n, ast.Lambda):
                local |= {a.arg for a in n.args.args}
        for name in sorted(_loaded(node) - bound - local):
            line = min((n.lineno for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name),
                       default=getattr(line_of, "lineno", 0))
            free.setdefault(name, line)

    for s in stmts:
        if isinstance(s, _BLOCKS):
            heads: list[ast.AST] = []
            if isinstance(s, (ast.With, ast.AsyncWith)):
                heads = [i.context_expr for i in s.items]
            elif isinstance(s, ast.If):
                heads = [s.test]
            for h in heads:
                note(h, s)
            if isinstance(s, (ast.With, ast.AsyncWith)):
                for i in s.items:
                    if i.optional_vars is not None:
                        bound |= _bound(i.optional_vars)
            blocks = [s.body, getattr(s, "orelse", []) or [], getattr(s, "finalbody", []) or []]
            blocks += [h.body for h in getattr(s, "handlers", []) or []]
            for block in blocks:
                _free(block, bound, free)
            continue
        note(s, s)
        bound |= _bound(s)
    return free


def _calls(node: ast.AST):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            yield n


def _attr_call(call: ast.Call) -> tuple[str | None, str | None]:
    """(receiver name, method) of `name.method(...)`."""
    f = call.func
    if isinstance(f, ast.Attribute):
        return (f.value.id if isinstance(f.value, ast.Name) else None), f.attr
    return None, None


def _func_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _has_backward(node: ast.AST) -> bool:
    return any(_func_name(c) == "backward" for c in _calls(node))


# --------------------------------------------------------------------------- finding the step


def _path(body: list[ast.stmt], line: int) -> list[tuple[ast.stmt, list[ast.stmt]]]:
    """(statement, the block holding it) from a module-level statement down to the innermost one
    around `line`."""
    out: list[tuple[ast.stmt, list[ast.stmt]]] = []
    block: list[ast.stmt] | None = body
    while block:
        nxt = None
        for c in block:
            if isinstance(c, ast.stmt) and c.lineno <= line <= (c.end_lineno or c.lineno):
                nxt = c
        if nxt is None:
            break
        out.append((nxt, block))
        block = None
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(nxt, name, None) or []
            if any(isinstance(c, ast.stmt) and c.lineno <= line <= (c.end_lineno or c.lineno) for c in sub):
                block = sub
        for h in getattr(nxt, "handlers", None) or []:
            if any(c.lineno <= line <= (c.end_lineno or c.lineno) for c in h.body):
                block = h.body
    return out


def _is_optimizer_ctor(value: ast.AST | None) -> bool:
    if not isinstance(value, ast.Call):
        return False
    parts = []
    f = value.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    dotted = ".".join(reversed(parts))
    if "lr_scheduler" in dotted or "scheduler" in dotted.lower():
        return False
    cls = getattr(torch.optim, parts[0], None) if parts else None
    return ("optim" in dotted) or (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer))


def _bindings(scope: list[ast.stmt]) -> dict[str, list[ast.stmt]]:
    out: dict[str, list[ast.stmt]] = {}
    for s in scope:
        for n in _bound(s) if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else {s.name}:
            out.setdefault(n, []).append(s)
    return out


def _optimizer_of(call: ast.Call, binds: dict[str, list[ast.stmt]]) -> str | None:
    """The optimizer `opt.step()` / `scaler.step(opt)` steps, when the file builds it as one."""
    recv, meth = _attr_call(call)
    if meth != "step":
        return None
    cands = []
    if call.args and isinstance(call.args[0], ast.Name):
        cands.append(call.args[0].id)
    if recv:
        cands.append(recv)
    for name in cands:
        for s in reversed(binds.get(name, [])):
            if isinstance(s, ast.Assign) and _is_optimizer_ctor(s.value):
                return name
        if "opt" in name.lower() and "sched" not in name.lower() and not binds.get(name):
            return name  # built outside the file; reported as missing when the setup is collected
    return None


def _slice(stmts: list[ast.stmt], essential: set[int]) -> list[ast.stmt]:
    """The essential statements plus those binding what they read (a backward slice, statement level)."""
    needed: set[str] = set()
    keep: set[int] = set()
    for i in range(len(stmts) - 1, -1, -1):
        s = stmts[i]
        if i in essential or (_bound(s) & needed):
            keep.add(i)
            needed |= _loaded(s)
    return [s for i, s in enumerate(stmts) if i in keep]


def _setup_calls(stmts: list[ast.stmt], names: set[str]) -> list[ast.stmt]:
    out = []
    for s in stmts:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            recv, meth = _attr_call(s.value)
            if recv in names and meth in SETUP_METHODS:
                out.append(s)
    return out


def extract(module: ast.Module, line: int, kept: set[int]) -> Step:
    """The training step around `line` in module-level code. `kept`: ids of the module-level
    statements the verifier's loader runs anyway (imports, definitions, constants)."""
    path = _path(module.body, line)
    chain = [n for n, _ in path if isinstance(n, LOOPS)]
    if not chain:
        raise Untestable(f"line {line} is not inside a module-level loop")
    inner = chain[-1]
    if not isinstance(inner, ast.For):
        raise Untestable(f"the loop at line {inner.lineno} is a `while` loop: there is no batch target to bind a "
                         f"synthetic batch to")
    body = inner.body
    b = next((i for i, s in enumerate(body) if _has_backward(s)), None)
    if b is None:
        raise Untestable(f"the loop at line {inner.lineno} calls backward() only in nested code")
    # what runs before the outermost loop: module-level statements, and those before it in the blocks
    # around it (`if __name__ == "__main__":`, `with ...:`), whose headers are not run
    scope: list[ast.stmt] = []
    for node, block in path:
        scope += [x for x in block if x.lineno < node.lineno]
        if node is chain[0]:
            break
    binds = _bindings(scope)
    s_idx, optimizer = None, None
    for i in range(b, len(body)):
        for c in _calls(body[i]):
            name = _optimizer_of(c, binds)
            if name is not None:
                s_idx, optimizer = i, name
                break
        if s_idx is not None:
            break
    if s_idx is None or optimizer is None:
        raise Untestable(f"no optimizer step after backward() in the loop at line {inner.lineno}")
    window = body[: s_idx + 1]
    essential = {b, s_idx}
    for i, s in enumerate(window):
        if any(_func_name(c) in GRAD_OPS for c in _calls(s)):
            essential.add(i)
    kept_stmts = _slice(window, essential)
    before = [s for s in kept_stmts if s.lineno <= body[b].lineno]
    after = [s for s in kept_stmts if s.lineno > body[b].lineno]

    # the batch target
    index, start, batch = None, 0, inner.target
    it = inner.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate":
        if not (isinstance(inner.target, (ast.Tuple, ast.List)) and len(inner.target.elts) == 2):
            raise Untestable(f"the loop at line {inner.lineno} unpacks enumerate() in a way the verifier does not model")
        idx, batch = inner.target.elts
        index = idx.id if isinstance(idx, ast.Name) else None
        for a in it.args[1:2]:
            if isinstance(a, ast.Constant) and isinstance(a.value, int):
                start = a.value
    elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip":
        raise Untestable(f"the loop at line {inner.lineno} iterates zip(...): several data sources are not modelled")

    free = _free(kept_stmts)
    target_names = _bound(inner.target)
    outer_names = sorted({n for loop in chain[:-1] if isinstance(loop, ast.For) for n in _bound(loop.target)})
    # statements of the enclosing loops' bodies before the inner loop that bind what the step reads
    preamble: list[ast.stmt] = []
    for outer, nxt in zip(chain[:-1], chain[1:]):
        head = []
        for s in outer.body:
            if s.lineno >= nxt.lineno:
                break
            head.append(s)
        want = set(free) - target_names
        pre = [s for s in head if _bound(s) & want and not isinstance(s, LOOPS)]
        preamble += _slice(pre, set(range(len(pre))))
    preamble_sorted = sorted(preamble, key=lambda s: s.lineno)
    need = (set(free) | set(_free(preamble_sorted))) - target_names - set(outer_names)
    for s in preamble_sorted:
        need -= _bound(s)
    setup = _collect_setup(scope, need, kept, free)
    names_built = set()
    for s in setup:
        names_built |= _bound(s)
    # `model.train()` in an enclosing loop, `model.to(device)` at module level
    calls_on = need | names_built
    extra_pre = _setup_calls([s for loop in chain[:-1] for s in loop.body if s.lineno < inner.lineno], calls_on)
    preamble_sorted = sorted({id(s): s for s in preamble_sorted + extra_pre}.values(), key=lambda s: s.lineno)

    loss_name, scaler = None, None
    for c in _calls(body[b]):
        if _func_name(c) == "backward" and isinstance(c.func, ast.Attribute):
            v = c.func.value
            if isinstance(v, ast.Call) and v.args and isinstance(v.args[0], ast.Name):  # scaler.scale(loss)
                if isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name):
                    scaler = v.func.value.id
                v = v.args[0]
            loss_name = v.id if isinstance(v, ast.Name) else None
    step = Step(loop=inner, loss=loss_name, scaler=scaler, setup=setup, preamble=preamble_sorted, outer_names=outer_names, before=before,
                after=after, optimizer=optimizer, index=index, start=start, batch=batch)
    for s in setup + preamble_sorted + before + after:
        step.lines |= set(range(s.lineno, (s.end_lineno or s.lineno) + 1))
    _batch_structure(step, kept_stmts)
    return step


def _collect_setup(body: list[ast.stmt], need: set[str], kept: set[int],
                   free_lines: dict[str, int]) -> list[ast.stmt]:
    """The statements of `body` (what runs before the loop) that bind `need` (and what those read), in
    order; statements the loader keeps are not repeated. A name bound nowhere is Untestable."""
    chosen: dict[int, ast.stmt] = {}
    todo = sorted(need)
    seen: set[str] = set()
    missing: dict[str, int] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        binders = [s for s in body if name in _bound(s)]
        if not binders:
            if hasattr(builtins, name) or name.startswith("__"):
                continue
            missing[name] = free_lines.get(name, 0)
            continue
        for s in binders:
            if id(s) in kept or isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(s, LOOPS):
                continue  # a loop variable left over from an earlier loop is not a setup value
            chosen[id(s)] = s
            todo.extend(sorted(set(_free([s])) - seen))
    if missing:
        names = sorted(missing, key=lambda n: (missing[n], n))
        listed = ", ".join(f"`{n}` (line {missing[n]})" if missing[n] else f"`{n}`" for n in names)
        one = len(names) == 1
        raise Untestable(
            f"{listed}, which the loop's training step uses, {'is' if one else 'are'} not defined in the file before "
            f"the loop: {'it comes' if one else 'they come'} from code the file does not contain (an earlier notebook "
            f"cell, another script), so the step cannot be run as the script runs it"
        )
    stmts = sorted(chosen.values(), key=lambda s: s.lineno)
    built = set()
    for s in stmts:
        built |= _bound(s)
    stmts += _setup_calls(body, built & (need | built))
    return sorted({id(s): s for s in stmts}.values(), key=lambda s: s.lineno)


# --------------------------------------------------------------------------- the batch


def _const_key(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return node.value
    return None


def _batch_structure(step: Step, stmts: list[ast.stmt]) -> None:
    """Which parts of the batch the step reads: `(x, y)` targets, `batch["inputs"]` / `batch[0]`
    subscripts, or the batch itself; `step.structure` says how to assemble it."""
    target = step.batch

    def from_target(t: ast.AST, path: tuple) -> Any:
        if isinstance(t, ast.Name):
            return _name_structure(t.id, path)
        if isinstance(t, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in t.elts):
                raise Untestable("the loop's target unpacks the batch with a starred name")
            return ("tuple", [from_target(e, path + (i,)) for i, e in enumerate(t.elts)])
        raise Untestable(f"the loop's target `{ast.unparse(t)}` is not a name or a tuple of names")

    def _name_structure(name: str, path: tuple) -> Any:
        keys: list = []
        bare = False
        for s in stmts:
            for n in ast.walk(s):
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
                    k = _const_key(n.slice)
                    if k is None:
                        raise Untestable(f"the batch `{name}` is indexed by `{ast.unparse(n.slice)}`, not a constant key")
                    if k not in keys:
                        keys.append(k)
        for s in stmts:
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                    parent_sub = any(isinstance(p, ast.Subscript) and p.value is n for p in ast.walk(s))
                    if not parent_sub:
                        bare = True
        if keys and bare:
            raise Untestable(f"the step uses the batch `{name}` both whole and by key")
        if keys and all(isinstance(k, str) for k in keys):
            for k in keys:
                step.leaves[path + (k,)] = name
            return ("dict", {k: ("leaf", path + (k,)) for k in keys})
        if keys and all(isinstance(k, int) and k >= 0 for k in keys):
            n = max(keys) + 1
            for k in keys:
                step.leaves[path + (k,)] = name
            return ("tuple", [("leaf", path + (i,)) if i in keys else ("unused", None) for i in range(n)])
        if keys:
            raise Untestable(f"the batch `{name}` is indexed by keys of mixed kinds")
        step.leaves[path] = name
        return ("leaf", path)

    step.structure = from_target(target, ())
    read = set(_free(stmts))
    if not (set(step.leaves.values()) & read):
        # the loop makes its own data (`for step in range(n): x = torch.randn(...)`): nothing to synthesize
        step.leaves, step.structure = {}, None
        for s in step.before:
            for c in _calls(s):
                if isinstance(c.func, ast.Name):
                    step.model_calls.append((c.func.id, []))
        if not step.model_calls:
            raise Untestable("no call of a module (`model(x)`) was found before backward() in the loop")
        return
    # the model call: a call whose positional arguments read batch leaves
    leaf_names = _leaf_names(step, stmts)
    for s in step.before:
        for c in _calls(s):
            if not isinstance(c.func, ast.Name):
                continue
            refs = [_leaves_of(a, leaf_names, step) for a in c.args]
            if c.args and all(len(r) == 1 for r in refs) and not c.keywords:
                step.model_calls.append((c.func.id, [next(iter(r)) for r in refs]))
    if not step.model_calls:
        raise Untestable("no call of a module on the batch (`model(x)`) was found before backward() in the loop")


def _leaf_names(step: Step, stmts: list[ast.stmt]) -> dict[str, set]:
    """Names bound in the step from batch leaves (`inputs = batch["inputs"].to(device)`)."""
    names: dict[str, set] = {}

    def walk_target(t: ast.AST, path: tuple) -> None:
        if isinstance(t, ast.Name):
            names[t.id] = {p for p in step.leaves if p[: len(path)] == path}
        elif isinstance(t, (ast.Tuple, ast.List)):
            for i, e in enumerate(t.elts):
                walk_target(e, path + (i,))

    walk_target(step.batch, ())
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            refs = _leaves_of(s.value, names, step)
            if refs:
                names[s.targets[0].id] = refs
    return names


def _leaves_of(expr: ast.AST, names: dict[str, set], step: Step) -> set:
    out: set = set()
    batch_name = step.batch.id if isinstance(step.batch, ast.Name) else None
    for n in ast.walk(expr):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == batch_name:
            k = _const_key(n.slice)
            if (k,) in step.leaves:
                out.add((k,))
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names and n.id != batch_name:
            out |= names[n.id]
        elif isinstance(n, ast.Name) and n.id == batch_name and () in step.leaves:
            out.add(())
    return out


def assemble(structure: Any, values: dict) -> Any:
    if structure is None:
        return None
    kind, spec = structure
    if kind == "leaf":
        return values[spec]
    if kind == "unused":
        return torch.zeros(BATCH)
    if kind == "dict":
        return {k: assemble(v, values) for k, v in spec.items()}
    return tuple(assemble(v, values) for v in spec)


def target_candidates(out: torch.Tensor, dtype: torch.dtype) -> list[tuple[str, Any]]:
    """Synthetic targets for a loss of the model's output, tried in order until the original's step
    runs: 0/1 floats of the output's shape (BCE, MSE), class indices over its last dimension (CE)."""
    g = torch.Generator().manual_seed(SEED_INPUT + 5)
    shape = tuple(out.shape)
    cands = [(f"float 0/1 targets of shape {shape}", (torch.rand(shape, generator=g) > 0.5).to(dtype))]
    if out.dim() >= 2:
        cls = shape[-1]
        cands.append((f"class indices in [0, {cls}) of shape {shape[:-1]}",
                      torch.randint(0, cls, shape[:-1], generator=g)))
    cands.append((f"standard normal targets of shape {shape}", torch.randn(shape, generator=g, dtype=dtype)))
    return cands


# --------------------------------------------------------------------------- running


def compile_block(stmts: list[ast.stmt], name: str):
    return compile(ast.Module(body=list(stmts), type_ignores=[]), name, "exec")


def build(ns: dict, step: Step) -> None:
    """Run the setup (module level) and the enclosing loops' preamble in the loaded module's namespace."""
    with seeded(SEED_BUILD):
        _run_each(ns, step.setup, "<script setup>", "the script's setup statement at line {line} (`{code}`)")
        for n in step.outer_names:
            ns[n] = 0
        _run_each(ns, step.preamble, "<loop preamble>", "the statement at line {line} (`{code}`), which the step needs,")


def _run_each(ns: dict, stmts, filename: str, what: str) -> None:
    """Run statements one by one, so that the one that raises is the one named."""
    for s in stmts:
        try:
            exec(compile_block([s], filename), ns)
        except Exception as e:  # noqa: BLE001
            raise Untestable(f"{what.format(line=s.lineno, code=ast.unparse(s)[:80])} raises {fmt_exc(e)}") from e


def bind_batch(ns: dict, step: Step, batch: Any) -> None:
    if step.structure is None:  # the loop's own data: its target is an index (or unused)
        for n in _bound(step.loop.target):
            ns[n] = step.start
        return
    value = (step.start, batch) if step.index is not None or isinstance(step.loop.iter, ast.Call) and \
        isinstance(step.loop.iter.func, ast.Name) and step.loop.iter.func.id == "enumerate" else batch
    ns["__gf_batch_value"] = value
    target = step.loop.target
    assign = ast.Assign(targets=[target], value=ast.Name(id="__gf_batch_value", ctx=ast.Load()))
    ast.copy_location(assign, target)
    ast.fix_missing_locations(assign)
    exec(compile_block([assign], "<batch>"), ns)


def changed_lines(old_src: str, new_src: str) -> tuple[set[int], set[int]]:
    a, b = old_src.splitlines(), new_src.splitlines()
    old_lines: set[int] = set()
    new_lines: set[int] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            old_lines.update(range(i1 + 1, i2 + 1))
            new_lines.update(range(j1 + 1, j2 + 1))
    blank = {i + 1 for i, x in enumerate(a) if not x.strip() or x.strip().startswith("#")}
    blank_new = {i + 1 for i, x in enumerate(b) if not x.strip() or x.strip().startswith("#")}
    return old_lines - blank, new_lines - blank_new


def module_of(ns: dict, name: str | None) -> nn.Module | None:
    m = ns.get(name) if name else None
    return m if isinstance(m, nn.Module) else None


def grads_of(model: nn.Module) -> dict[str, torch.Tensor | None]:
    return {n: (None if p.grad is None else p.grad.detach().clone()) for n, p in model.named_parameters()}


def params_of(model: nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def fresh(values: dict) -> dict:
    return {k: (v.clone() if torch.is_tensor(v) else copy.deepcopy(v)) for k, v in values.items()}
