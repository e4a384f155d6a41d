"""GF301 deprecated-cuda-amp: `torch.cuda.amp.GradScaler` / `torch.cuda.amp.autocast` / `torch.cpu.amp.autocast`."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.names import dotted, from_import_pairs, import_pairs, qualname, shorten
from gradfix.analysis.params import all_calls, code_of, last_name, make_kwarg, root_name, torch_expr_for
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

# deprecated qualname -> (api, device)
DEPRECATED = {
    "torch.cuda.amp.GradScaler": ("GradScaler", "cuda"),
    "torch.cuda.amp.grad_scaler.GradScaler": ("GradScaler", "cuda"),
    "torch.cuda.amp.autocast": ("autocast", "cuda"),
    "torch.cuda.amp.autocast_mode.autocast": ("autocast", "cuda"),
    "torch.cpu.amp.autocast": ("autocast", "cpu"),
    "torch.cpu.amp.autocast_mode.autocast": ("autocast", "cpu"),
}
# the autograd.Function decorators: torch.amp's take a keyword-only `device_type` (torch 2.13)
DEPRECATED_DECORATORS = {
    "torch.cuda.amp.custom_fwd": "custom_fwd", "torch.cuda.amp.autocast_mode.custom_fwd": "custom_fwd",
    "torch.cuda.amp.custom_bwd": "custom_bwd", "torch.cuda.amp.autocast_mode.custom_bwd": "custom_bwd",
}
_LAST_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in DEPRECATED) | {"autocast", "GradScaler"}
# positional parameters of the deprecated autocast classes, in order (torch 2.13)
AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")


class DeprecatedCudaAmp(Rule):
    id = "GF301"
    name = "deprecated-cuda-amp"
    summary = "`torch.cuda.amp.GradScaler` / `torch.cuda.amp.autocast` / `torch.cpu.amp.autocast` are deprecated"
    docs = RuleDocs(
        what=(
            "Finds calls of `torch.cuda.amp.GradScaler(...)`, `torch.cuda.amp.autocast(...)` and "
            "`torch.cpu.amp.autocast(...)` however they are imported (`import torch.cuda.amp as amp`, "
            "`from torch.cuda.amp import autocast, GradScaler`), in `with` items, decorators and assignments. "
            "`torch.amp.GradScaler(\"cuda\")`, `torch.autocast(\"cuda\")` and `torch.amp.autocast(...)` are the "
            "current API and are left alone. So is the compatibility branch of a version fallback, decided from "
            "the tree: a call under `if`/`else` (or a conditional expression) on a version test "
            "(`_TORCH_GREATER_EQUAL_2_4`, `is_torch_version(\">=\", \"2.3\")`, `version.parse(torch.__version__)`, "
            "`TORCH_VERSION >= (2, 4)`, `hasattr(torch, \"amp\")`, or a module-level name assigned from one), after an "
            "`if <version test>: return ...`, in either branch of a `try`/`except (AttributeError, ImportError, "
            "TypeError)` (or a bare / `Exception` handler) whose other branch uses `torch.amp` / `torch.autocast`, "
            "and a name that imports in the file bind both to the old and to the new class, unless an import in the "
            "call's own block binds it just before (`from torch.cuda.amp import autocast` then `return autocast()`). "
            "Not a fallback, and reported: the deprecated call on the new-release side of a plain comparison of "
            "`torch.__version__` (or `version.parse` of it) with a release from 2.4 on, `if torch.__version__ >= "
            "\"2.4\": <old API> else: <new API>`, branches swapped so that every current torch warns. Also the "
            "`torch.autograd.Function` decorators `@torch.cuda.amp.custom_fwd` / `@custom_bwd` (with or without "
            "arguments), reported without a fix: the replacement is `@torch.amp.custom_fwd(device_type=\"cuda\")`."
        ),
        why=(
            "Each call emits `FutureWarning: torch.cuda.amp.GradScaler(args...) is deprecated` (torch 2.13) and the "
            "module is slated for removal. It is not a learning hazard: the old classes are thin subclasses of the "
            "new ones. The first seed uses both (`torch.cuda.amp.GradScaler()`, `torch.cuda.amp.autocast(True)`). "
            "The rewrite has one trap: the new `torch.autocast(device_type, dtype, enabled, ...)` takes `dtype` "
            "second, so a naive `torch.autocast(\"cuda\", True)` silently sets `dtype=True` (measured: "
            "`fast_dtype` becomes `True`)."
        ),
        example="scaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast(True):\n    loss = crit(net(x), y)",
        fixed_example=(
            "scaler = torch.amp.GradScaler(\"cuda\")\nwith torch.autocast(\"cuda\", enabled=True):\n"
            "    loss = crit(net(x), y)"
        ),
        fix=(
            "`torch.amp.GradScaler(\"cuda\", <args as they were>)` (the new signature only adds the device in front); "
            "`torch.autocast(\"cuda\" | \"cpu\", <keywords>)`, with positional arguments turned into keywords "
            "(`enabled=`, `dtype=`, `cache_enabled=`) because the positions differ. The file's own spelling of "
            "`torch` is reused; when the call was imported by name and `torch` itself is not imported, it is "
            "reported without a fix. An import line left unused is not touched (your linter will say so). "
            "Version fallbacks get no finding and no fix: their old branch exists for the releases without the new "
            "API, and rewriting it would break exactly those. "
            "TorchFix (TOR101) covers `autocast` only, not `GradScaler`."
        ),
        fix_safety="Safe: the same class is constructed with the same settings. The verifier checks it.",
        verification=(
            "`same-object`: both call expressions are evaluated in the loaded file's namespace (imports and module "
            "constants kept; arguments that name local variables are replaced by probe values, the same in both, "
            "bound by the old signature) and the objects compared: a `torch.amp.GradScaler` with equal device, "
            "enabled flag, init scale, growth and backoff factors and growth interval; an autocast with equal "
            "device type, fast dtype, enabled flag and cache flag. On a CPU-only build CUDA AMP disables itself, so "
            "the objects are built with CUDA availability simulated and the detail says so; CPU autocast is also "
            "entered and a matmul compared. `equivalent`."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a call whose callee's last name is a deprecated API's (`_LAST_NAMES`),
        or the name of a deprecated decorator (`@torch.cuda.amp.custom_fwd` is not a call)."""
        return bool(facts.called & _LAST_NAMES) or bool(facts.idents & {"custom_fwd", "custom_bwd"})

    def check(self, ctx):
        index = ctx.index
        imports = index.imports
        for node in all_calls(index):
            if last_name(node.func) not in _LAST_NAMES:
                continue
            reaching = reaching_import(index, node.func)
            q = reaching or qualname(node.func, imports)
            if q not in DEPRECATED:
                continue
            if (reaching is None and ambiguous_import(index, node.func)) or in_version_fallback(index, node):
                continue  # the compatibility branch of a fallback: the old API on purpose
            api, device = DEPRECATED[q]
            binds = {root_name(node.func).value: reaching.rsplit(".", len((dotted(node.func) or "").split(".")) - 1)[0]} \
                if reaching else {}
            yield self._finding(ctx, node, api, device, binds)
        yield from self._decorators(ctx)

    def _decorators(self, ctx):
        """`@torch.cuda.amp.custom_fwd`, `@custom_fwd(cast_inputs=torch.float32)`, `@custom_bwd` (detect only:
        the verifier has no check of an autograd.Function's decorators yet)."""
        index = ctx.index
        for node in walk(index.module):
            if type(node) is not cst.Decorator:
                continue
            expr = node.decorator
            func = expr.func if isinstance(expr, cst.Call) else expr
            if last_name(func) not in ("custom_fwd", "custom_bwd"):
                continue
            name = DEPRECATED_DECORATORS.get(qualname(func, index.imports) or "")
            if name is None or ambiguous_import(index, func) or in_version_fallback(index, node):
                continue
            args = "" if not isinstance(expr, cst.Call) or not expr.args else ", ".join(
                code_of(a).rstrip(", ") for a in expr.args) + ", "
            new = f'torch.amp.{name}({args}device_type="cuda")'
            yield ctx.finding(expr, f"`{shorten(code_of(expr))}` is deprecated (FutureWarning in torch 2.13); use "
                                    f"`@{shorten(new)}`: the same decorator, current API (`device_type` is "
                                    f"keyword-only and required there)")

    def _finding(self, ctx, call: cst.Call, api: str, device: str, binds: dict | None = None):
        """`binds`: names the call reads that a function-local import binds (`{"GradScaler":
        "torch.cuda.amp.GradScaler"}`), for the verifier, which evaluates the call outside its function."""
        old = code_of(call)
        new_call, why_not = self._rewrite(ctx, call, api, device)
        if new_call is not None:
            new = code_of(new_call)
            message = (f"`{shorten(old)}` is deprecated (FutureWarning in torch 2.13); use `{shorten(new)}`: the same "
                       f"object, current API")
            fix = ctx.fix(f"use `{shorten(new)}`", [Edit(call, new_call)], Safety.SAFE,
                          {"kind": "same-object", "api": api, "device": device, "old": old, "new": new,
                           **({"binds": binds} if binds else {})})
            return ctx.finding(call, message, fix)
        target = f'torch.amp.GradScaler("{device}", ...)' if api == "GradScaler" else f'torch.autocast("{device}", ...)'
        return ctx.finding(call, f"`{shorten(old)}` is deprecated (FutureWarning in torch 2.13); use `{target}` "
                                 f"({why_not})")

    def _rewrite(self, ctx, call: cst.Call, api: str, device: str):
        imports = ctx.index.imports
        suffix = "amp.GradScaler" if api == "GradScaler" else "autocast"
        func = torch_expr_for(call.func, imports, suffix)
        if func is None:
            return None, "no fix: `torch` is not imported in this file"
        dev = cst.Arg(value=cst.SimpleString(f'"{device}"'))
        if call.args and isinstance(call.args[0].comma, cst.Comma):
            dev = dev.with_changes(comma=call.args[0].comma)  # same layout as the first argument
        if api == "GradScaler":
            # torch.amp.GradScaler(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled):
            # the old positions follow the device unchanged.
            return call.with_changes(func=func, args=[dev] + list(call.args)), None
        args = []
        positional = 0
        for a in call.args:
            if a.star == "*":
                return None, "no fix: `*args` cannot be mapped onto the new positions"
            if a.keyword is None and not a.star:
                if positional >= len(AUTOCAST_POSITIONAL):
                    return None, "no fix: too many positional arguments"
                kw = make_kwarg(AUTOCAST_POSITIONAL[positional], a.value)
                args.append(kw.with_changes(comma=a.comma, whitespace_after_arg=a.whitespace_after_arg))
                positional += 1
            else:
                args.append(a)
        return call.with_changes(func=func, args=[dev] + args), None


# --------------------------------------------------------------------------- version fallbacks
# Candidates for the shared analysis: "is this statement the compatibility branch of a
# version check or an import/attribute fallback" is a fact other deprecation rules need too.

# exceptions a missing or changed API raises: `torch.amp.GradScaler` absent (AttributeError,
# ImportError) or not taking a device yet (TypeError)
_COMPAT_EXCEPTIONS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "NameError"})
_BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})
_COMPARISON_WORDS = frozenset({"ge", "gt", "le", "lt", "eq", "geq", "leq", "greater", "less", "older", "newer",
                               "least", "most", "before", "after", "above", "below", "new", "old"})
_TORCH_WORDS = frozenset({"torch", "pt", "pytorch"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _version_word(name: str) -> bool:
    """`is_torch_version`, `TORCH_VERSION`, `_TORCH_GREATER_EQUAL_2_4`, `torch_ge_2_3`, `IS_PT2`."""
    if "version" in name.lower():
        return True
    words = {w.lower() for w in _WORD.findall(name)}
    return bool(words & _TORCH_WORDS) and bool(words & _COMPARISON_WORDS or any(w.isdigit() for w in words))


def _is_current_amp(q: str | None) -> bool:
    return q is not None and (q == "torch.autocast" or q == "torch.amp" or q.startswith("torch.amp."))


def is_version_test(index, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether a condition tests torch's version or whether the new AMP API exists: a name or call
    that says so (`_TORCH_GREATER_EQUAL_2_4`, `is_torch_version(">=", "2.3")`, `version.parse(...)`),
    `torch.__version__`, `hasattr(torch, "amp")`, a comparison or boolean of these, or a module-level
    name assigned from one. Read from the tree only."""
    if depth > 3:
        return False
    for node in walk(expr):
        if isinstance(node, cst.Name) and _version_word(node.value):
            return True
        if isinstance(node, cst.Attribute):
            if _version_word(node.attr.value):
                return True
            q = qualname(node, index.imports)
            if q is not None and q.startswith("torch.") and ("__version__" in q or q.startswith("torch.version")):
                return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("hasattr", "getattr"):
            if node.args:
                target = qualname(node.args[0].value, index.imports)
                if target is not None and (target == "torch" or target.startswith("torch.")):
                    return True
        if isinstance(node, cst.Name) and depth < 3:
            value = _module_assignment(index, node.value)
            if value is not None and is_version_test(index, value, depth + 1):
                return True
    return False


def _module_assignment(index, name: str) -> cst.BaseExpression | None:
    """The value of the single top-level `name = value` of the file (None if none or several)."""
    table = index.memo("gf301.module_assignments", lambda: _module_assignments(index.module))
    return table.get(name)


def _module_assignments(module: cst.Module) -> dict[str, cst.BaseExpression]:
    seen: dict[str, list] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    t = small.targets[0].target
                    if isinstance(t, cst.Name):
                        seen.setdefault(t.value, []).append(small.value)
                elif isinstance(small, cst.AnnAssign) and small.value is not None and \
                        isinstance(small.target, cst.Name):
                    seen.setdefault(small.target.value, []).append(small.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _handler_names(handler: cst.ExceptHandler) -> set[str] | None:
    """Last names of the exceptions a handler catches; None for a bare `except:`."""
    if handler.type is None:
        return None
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = set()
    for t in types:
        value = t.value if isinstance(t, cst.Element) else t
        d = dotted(value)
        if d is not None:
            names.add(d.rsplit(".", 1)[-1])
    return names


def _mentions_current_amp(index, nodes) -> bool:
    for tree in nodes:
        for node in walk(tree):
            if isinstance(node, (cst.Name, cst.Attribute)) and _is_current_amp(qualname(node, index.imports)):
                return True
            if isinstance(node, cst.ImportFrom) and node.module is not None:
                if _is_current_amp(dotted(node.module)) or dotted(node.module) == "torch" and not isinstance(
                        node.names, cst.ImportStar) and any(dotted(a.name) == "autocast" for a in node.names):
                    return True
    return False


def _is_fallback_try(index, node: cst.Try, branch: cst.CSTNode) -> bool:
    """A `try: <new API> except (AttributeError, ImportError, TypeError): <old API>` (either way
    round): a handler catches what a missing or changed API raises (or everything), and a branch
    other than `branch`, the one holding the call, uses the current API."""
    if branch is node.finalbody:
        return False
    catches = False
    for h in node.handlers:
        names = _handler_names(h)
        if names is None or names & (_COMPAT_EXCEPTIONS | _BROAD_EXCEPTIONS):
            catches = True
    if not catches:
        return False
    others = [b for b in [node.body, *node.handlers, node.orelse] if b is not None and b is not branch]
    return _mentions_current_amp(index, others)


def in_version_fallback(index, call: cst.Call) -> bool:
    """Whether the call sits in a branch chosen by torch's version or by the new API's presence:
    under `if <version test>:` / its `else`, a conditional expression on one, after an
    `if <version test>: return ...` in the same block, or in a try/except fallback."""
    child: cst.CSTNode = call
    cur = index.parents.get(call)
    while cur is not None:
        if isinstance(cur, (cst.If, cst.IfExp)) and child is not cur.test and is_version_test(index, cur.test):
            if not _runs_from_deprecation(index, cur, child):
                return True
        if isinstance(cur, cst.Try) and _is_fallback_try(index, cur, child):
            return True
        if isinstance(cur, cst.IndentedBlock) or isinstance(cur, cst.Module):
            if _after_version_return(index, cur, child):
                return True
        child, cur = cur, index.parents.get(cur)
    return False


# torch.cuda.amp's autocast and GradScaler warn from this release on
_DEPRECATED_SINCE = (2, 4)
_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")


def _runs_from_deprecation(index, test_holder, branch) -> bool:
    """The branch is the one a plain comparison of torch's version with a release literal at or after the
    deprecation takes on new versions: `if torch.__version__ >= "2.4": <deprecated>` (or `version.parse(...)`
    of both sides, the literal on the left, `<` with the call under `else`). The author meant it for the
    new API and swapped the branches; no fallback is left to keep. Only a plain `else` counts, not an elif."""
    test = test_holder.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    if isinstance(test_holder, cst.If):
        taken_when = True if branch is test_holder.body else False if isinstance(branch, cst.Else) else None
    else:
        taken_when = True if branch is test_holder.body else False if branch is test_holder.orelse else None
    if taken_when is None:
        return False
    target = test.comparisons[0]
    op, left, right = type(target.operator), test.left, target.comparator
    newer_if_true = {cst.GreaterThanEqual: True, cst.GreaterThan: True, cst.LessThan: False, cst.LessThanEqual: False}
    if op not in newer_if_true:
        return False
    release = _release(right)
    if release is not None and _torch_version_expr(index, left):
        newer = newer_if_true[op]
    else:
        release = _release(left)
        if release is None or not _torch_version_expr(index, right):
            return False
        newer = not newer_if_true[op]  # `"2.4" <= torch.__version__`
    return release >= _DEPRECATED_SINCE and taken_when == newer


def _release(expr) -> tuple[int, int] | None:
    """(major, minor) of `"2.4"` / `"2.4.0"`, or of `version.parse("2.4")` / `Version("2.4")`."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and dotted(expr.func) is not None and \
            dotted(expr.func).rsplit(".", 1)[-1] in ("parse", "Version", "LooseVersion"):
        expr = expr.args[0].value
    if isinstance(expr, cst.SimpleString):
        m = _RELEASE.match(expr.evaluated_value) if isinstance(expr.evaluated_value, str) else None
        if m is not None:
            return int(m.group(1)), int(m.group(2))
    return None


def _torch_version_expr(index, expr) -> bool:
    """`torch.__version__`, or `version.parse(torch.__version__)` / `Version(torch.__version__)`."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and dotted(expr.func) is not None and \
            dotted(expr.func).rsplit(".", 1)[-1] in ("parse", "Version", "LooseVersion"):
        expr = expr.args[0].value
    return qualname(expr, index.imports) == "torch.__version__"


def _after_version_return(index, block, stmt) -> bool:
    """`if <version test>: return <new>` (or raise) earlier in the block: what follows is the old branch."""
    body = block.body
    for prior in body:
        if prior is stmt:
            return False
        if isinstance(prior, cst.If) and is_version_test(index, prior.test) and _ends_in_exit(prior.body):
            return True
    return False


def _ends_in_exit(block: cst.BaseSuite) -> bool:
    stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = stmts[-1] if stmts else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    if isinstance(block, cst.SimpleStatementSuite):
        last = block.body[-1] if block.body else None
    return isinstance(last, (cst.Return, cst.Raise))


def reaching_import(index, func: cst.BaseExpression) -> str | None:
    """The qualified name of the callee when an import in the call's own function body (or the block holding
    it, up to the enclosing `def`) binds its root name before the call's statement, with no compound statement
    between them that may import it again: `from torch.cuda.amp import autocast` then `return autocast()` in the
    same branch is that import's `autocast`, whatever the file's other branches import. None otherwise."""
    root = root_name(func)
    if root is None or len(index.imports.bindings.get(root.value, ())) < 2:
        return None
    child: cst.CSTNode = func
    cur = index.parents.get(func)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(cur, cst.IndentedBlock):
            found = None
            for stmt in cur.body:
                if stmt is child:
                    break
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        target = _imported_as(small, root.value)
                        found = target if target is not None else found
                elif any(_imported_as(n, root.value) is not None for n in walk(stmt)):
                    return None  # a branch or loop between may bind it again: not shown
            if found is not None:
                rest = (dotted(func) or "").partition(".")[2]
                return f"{found}.{rest}" if rest else found
        child, cur = cur, index.parents.get(cur)
    return None


def _imported_as(node, local: str) -> str | None:
    """What an absolute `import` / `from ... import` statement binds `local` to, else None."""
    if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative and \
            not isinstance(node.names, cst.ImportStar):
        pairs = from_import_pairs(node, dotted(node.module) or "")
    elif isinstance(node, cst.Import):
        pairs = [(name, full) for name, full, _renamed in import_pairs(node)]
    else:
        return None
    return next((full for name, full in pairs if name == local), None)


def ambiguous_import(index, func: cst.BaseExpression) -> bool:
    """Whether the callee's root name is bound by several imports to different targets
    (`try: from torch.amp import GradScaler / except ImportError: from torch.cuda.amp import
    GradScaler`): which one a call sees is decided at run time, so the call is left alone."""
    root = root_name(func)
    if root is None:
        return False
    return len(index.imports.bindings.get(root.value, ())) > 1


RULE = DeprecatedCudaAmp
