"""Contracts that evaluate the rule's expressions in the loaded file's namespace (GF301, GF302).
Picked up by `checks.extra_checks`.

- `same-object` (GF301): the deprecated AMP constructor and its replacement build equal objects.
- `leaf-tensor` (GF302): the original is a non-leaf whose `.grad` stays None, the rewrite a leaf
  with the same values that gets a gradient.

Free names of the expressions become probe values (bound by the old signature, the same in both
calls). The module-building API contracts are in checks_api (GF303, GF304, GF306) and checks_forward
(GF305). Facts behind them: /work/shared/design/hazards.md ("Further hazards") and verification.md.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import warnings
from typing import Any

import torch

from . import source as S
from .runtime import (
    SEED_BUILD, SEED_RUN, Outcome, _norm, cuda_redirect, fmt_exc, is_gpu_error, plural, projected_loss, rel_diff,
    seeded,
)
from .context import Ctx

TOL_F32 = 1e-6


# --------------------------------------------------------------------------- helpers


def _namespace(ctx: Ctx, tag: str) -> tuple[dict, list[str]]:
    """The loaded version's globals (imports, definitions, constants); torch added if the file lacks it."""
    with _quiet():
        mod = ctx.module(tag)
    ns = dict(vars(mod))
    notes = []
    if "torch" not in ns:
        ns["torch"] = torch
        notes.append("the file does not import torch; evaluated with `import torch`")
    return ns, notes


def _free_names(tree: ast.AST) -> set[str]:
    """The names an expression reads from its namespace, builtins left out."""
    from .lean_namespace import reads

    return {n for n in reads(tree) if not hasattr(builtins, n)}


class _Subst(ast.NodeTransformer):
    """Replace subexpressions (matched by AST dump) or names with probe names."""

    def __init__(self, table: dict[str, str]):
        self.table = table

    def visit(self, node):  # type: ignore[override]
        if isinstance(node, ast.expr):
            key = ast.dump(node, annotate_fields=False, include_attributes=False)
            if key in self.table:
                return ast.copy_location(ast.Name(id=self.table[key], ctx=ast.Load()), node)
        return super().visit(node)


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def _parse_expr(src: str) -> ast.expr:
    return ast.parse(src.strip(), mode="eval").body


def _eval(tree: ast.expr, ns: dict) -> Any:
    code = compile(ast.fix_missing_locations(ast.Expression(body=tree)), "<gradfix-expr>", "eval")
    return eval(code, ns)


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype):
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def _cuda_code(*sources: str) -> bool:
    return S.uses_cuda(*sources)


@contextlib.contextmanager
def _maybe_redirect(active: bool):
    """Our own cuda->cpu redirect for snippets the module-level pass did not see (harmless when nested). Like
    the rest of the verifier it also redirects on a CUDA machine: `device="cuda"` on a random factory would
    otherwise draw from the CUDA generator and differ from the original's CPU draw."""
    if active:
        with cuda_redirect(True) as mode:
            yield mode
    else:
        yield None


# --------------------------------------------------------------------------- same-object (GF301)

_PROBES = {
    "GradScaler": {
        "init_scale": (1024.0, 8.0), "growth_factor": (3.0, 1.5), "backoff_factor": (0.25, 0.75),
        "growth_interval": (10, 50), "enabled": (True, False),
    },
    "autocast": {
        "enabled": (True, False), "dtype": (torch.float16, torch.bfloat16), "cache_enabled": (True, False),
    },
}
_OLD_POSITIONAL = {
    "GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    "autocast": ("enabled", "dtype", "cache_enabled"),
}


@contextlib.contextmanager
def _simulated_cuda(active: bool):
    """CUDA AMP disables itself on a CPU-only build; pretend CUDA is there while constructing
    (nothing is run on it), so the settings can be compared."""
    if not active:
        yield
        return
    import torch.cuda.amp.common as common

    saved = (common.amp_definitely_not_available, torch.cuda.is_bf16_supported)
    common.amp_definitely_not_available = lambda: False  # type: ignore[assignment]
    torch.cuda.is_bf16_supported = lambda *a, **k: True  # type: ignore[assignment]
    try:
        yield
    finally:
        common.amp_definitely_not_available, torch.cuda.is_bf16_supported = saved  # type: ignore[assignment]


def _settings(api: str, obj: Any) -> dict:
    if api == "GradScaler":
        if not isinstance(obj, torch.amp.GradScaler):
            raise TypeError(f"not a GradScaler: {type(obj).__name__}")
        out = {"device": obj._device, "enabled": obj._enabled}
        if obj._enabled:
            out.update(init_scale=obj._init_scale, growth_factor=obj._growth_factor,
                       backoff_factor=obj._backoff_factor, growth_interval=obj._growth_interval,
                       state_dict=obj.state_dict())
        return out
    if not isinstance(obj, torch.amp.autocast_mode.autocast):
        raise TypeError(f"not an autocast: {type(obj).__name__}")
    return {"device_type": obj.device, "fast_dtype": obj.fast_dtype, "enabled": obj._enabled,
            "cache_enabled": getattr(obj, "_cache_enabled", None)}


def _fmt_settings(api: str, s: dict) -> str:
    if api == "GradScaler":
        if not s["enabled"]:
            return f"a disabled GradScaler for {s['device']}"
        return (f"a {s['device']} GradScaler (init scale {s['init_scale']:g}, growth x{s['growth_factor']:g} every "
                f"{s['growth_interval']} steps, backoff x{s['backoff_factor']:g})")
    state = "an enabled" if s["enabled"] else "a disabled"
    return f"{state} {s['device_type']} autocast with {str(s['fast_dtype']).replace('torch.', '')}"


def _torch_object(qual: str):
    """The object `torch.cuda.amp.GradScaler` names (torch's own modules only), else None."""
    if not (qual == "torch" or qual.startswith("torch.")):
        return None
    import importlib

    parts = qual.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def check_same_object(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    api, device = c.get("api"), c.get("device", "cuda")
    unit = f"<{api} call, line {ctx.req.line}>"
    if api not in _PROBES or not c.get("old") or not c.get("new"):
        return Outcome("untestable", "same-object contract without api/old/new", unit)
    try:
        old_t, new_t = _parse_expr(c["old"]), _parse_expr(c["new"])
    except SyntaxError as e:
        return Outcome("untestable", f"the contract's expressions do not parse: {fmt_exc(e)}", unit)
    if not isinstance(old_t, ast.Call) or not isinstance(new_t, ast.Call):
        return Outcome("untestable", "the contract's expressions are not calls", unit)
    from .lean_namespace import lean_namespace  # the two calls only read `torch` and local names: no file load

    lean = lean_namespace(ctx.analysis.old_tree, ctx.analysis.new_tree, [old_t, new_t])
    ns_old, notes = (dict(lean), []) if lean else _namespace(ctx, "old")
    ns_new = dict(lean) if lean else _namespace(ctx, "new")[0]
    for local, qual in (c.get("binds") or {}).items():
        # a name a function-local `from torch.cuda.amp import GradScaler` binds: only torch's own objects
        value = _torch_object(qual)
        if value is not None:
            ns_old.setdefault(local, value)
            ns_new.setdefault(local, value)
    # bind the old call's arguments to parameter names; arguments that cannot be evaluated here
    # (local variables, `args.amp`) become probes, the same value in both calls
    opaque: dict[str, str] = {}     # dump -> probe name
    probe_param: dict[str, str] = {}  # probe name -> parameter it binds
    positional = _OLD_POSITIONAL[api]
    pos = 0
    for a in old_t.args:
        if isinstance(a, ast.Starred):
            return Outcome("untestable", "the call passes *args, which cannot be bound to parameters here", unit)
        param = positional[pos] if pos < len(positional) else None
        pos += 1
        _maybe_opaque(a, param, ns_old, opaque, probe_param)
    for kw in old_t.keywords:
        if kw.arg is None:
            if _evaluable(kw.value, ns_old):
                continue
            return Outcome("untestable", f"`**{ast.unparse(kw.value)}` cannot be evaluated outside its function", unit)
        _maybe_opaque(kw.value, kw.arg, ns_old, opaque, probe_param)
    unknown = [p for p, param in probe_param.items() if param not in _PROBES[api]]
    if unknown:
        return Outcome("untestable", "an argument that names a local variable binds to no known parameter", unit)
    old_s = _Subst(opaque).visit(copy.deepcopy(old_t))
    new_s = _Subst(opaque).visit(copy.deepcopy(new_t))
    left = (_free_names(old_s) - set(ns_old) - set(probe_param)) | (_free_names(new_s) - set(ns_new) - set(probe_param))
    if left:
        return Outcome("untestable", f"the call uses {', '.join(sorted(left))}, which is not defined at module level",
                       unit)
    simulate = device == "cuda" and not torch.cuda.is_available()
    rounds = 2 if probe_param else 1
    compared: list[str] = []
    for r in range(rounds):
        values = {p: _PROBES[api][param][r] for p, param in probe_param.items()}
        objs = {}
        for tag, tree, ns in (("old", old_s, ns_old), ("new", new_s, ns_new)):
            env = dict(ns)
            env.update(values)
            try:
                with _quiet(), _simulated_cuda(simulate):
                    objs[tag] = _eval(tree, env)
            except Exception as e:  # noqa: BLE001
                if tag == "old":
                    return Outcome("untestable", f"the original call raises {fmt_exc(e)}", unit)
                return Outcome("failed", f"the rewritten call raises {fmt_exc(e)}, while the original builds "
                               f"{type(objs['old']).__name__}", unit)
        try:
            so, sn = _settings(api, objs["old"]), _settings(api, objs["new"])
        except TypeError as e:
            return Outcome("failed", f"the rewrite does not build the same kind of object: {e}", unit)
        if so != sn:
            diff = [k for k in so if so.get(k) != sn.get(k)] or sorted(set(sn) - set(so))
            k = diff[0]
            return Outcome("failed", f"the rewrite builds a different object: {k} is {so.get(k)!r} in the original and "
                           f"{sn.get(k)!r} in the rewrite" + (f" (with {_fmt_probe(values, probe_param)})" if values else ""),
                           unit)
        if api == "autocast" and device == "cpu":
            run = _run_cpu_autocast(objs["old"], objs["new"])
            if run is not None and not run[0]:
                return Outcome("failed", run[1], unit)
            if run is not None:
                compared.append(run[1])
        compared.append(_fmt_settings(api, so) + (f" (probe {_fmt_probe(values, probe_param)})" if values else ""))
    ctx.redirect = False  # nothing was redirected: the objects were only constructed
    one_line = lambda t: " ".join(str(t).split()).replace("( ", "(").replace(", )", ")")  # noqa: E731
    detail = f"`{one_line(c['old'])}` and `{one_line(c['new'])}` build the same object: " + "; ".join(compared)
    if simulate:
        detail += (" (this CPU-only build disables CUDA AMP, so both were constructed with CUDA availability simulated; "
                   "the settings were compared, no CUDA kernel ran)")
    if probe_param:
        detail += f"; {plural(len(probe_param), 'argument')} naming local variables replaced by the same probe values in both"
    if notes:
        detail += "; " + "; ".join(notes)
    return Outcome("equivalent", detail, unit)


def _fmt_probe(values: dict, probe_param: dict) -> str:
    return ", ".join(f"{probe_param[p]}={v!r}" for p, v in values.items())


def _evaluable(expr: ast.expr, ns: dict) -> bool:
    try:
        with _quiet():
            _eval(copy.deepcopy(expr), dict(ns))
        return True
    except Exception:  # noqa: BLE001
        return False


def _maybe_opaque(expr: ast.expr, param: str | None, ns: dict, opaque: dict, probe_param: dict) -> None:
    if _evaluable(expr, ns):
        return
    key = _dump(expr)
    if key not in opaque:
        name = f"__gf_probe{len(opaque)}"
        opaque[key] = name
        probe_param[name] = param or "?"


def _run_cpu_autocast(old: Any, new: Any) -> tuple[bool, str] | None:
    g = torch.Generator().manual_seed(SEED_RUN)
    a = torch.randn(8, 8, generator=g, dtype=torch.float32)
    b = torch.randn(8, 8, generator=g, dtype=torch.float32)
    outs = []
    for obj in (old, new):
        try:
            with _quiet(), obj:
                outs.append(torch.mm(a, b))
        except Exception as e:  # noqa: BLE001
            return None if not outs else (False, f"entering the rewritten autocast raises {fmt_exc(e)}")
    if outs[0].dtype != outs[1].dtype or rel_diff(outs[0].float(), outs[1].float()) > 0:
        return False, (f"a matmul under the original gives {outs[0].dtype}, under the rewrite {outs[1].dtype} "
                       f"(norm-relative {rel_diff(outs[0].float(), outs[1].float()):.1e})")
    return True, f"a matmul under both gives {str(outs[0].dtype).replace('torch.', '')} with equal values"


# --------------------------------------------------------------------------- leaf-tensor (GF302)

_COPY_METHODS = ("cuda", "to", "cpu")


class _ForceCopy(ast.NodeTransformer):
    """`x.cuda()` -> `x.cuda().clone()`, `x.to(d)` -> `x.to(d).clone()`: a copy where the move is a no-op here."""

    def __init__(self) -> None:
        self.count = 0

    def visit_Call(self, node: ast.Call):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _COPY_METHODS:
            self.count += 1
            return ast.Call(func=ast.Attribute(value=node, attr="clone", ctx=ast.Load()), args=[], keywords=[])
        return node


def _device_positions(tree: ast.expr) -> set[str]:
    """Names used as a device: `.to(dev)`, `.cuda(dev)`, `device=dev`."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cuda"):
                for a in n.args[:1]:
                    out |= {x.id for x in ast.walk(a) if isinstance(x, ast.Name)}
            for kw in n.keywords:
                if kw.arg == "device":
                    out |= {x.id for x in ast.walk(kw.value) if isinstance(x, ast.Name)}
    return out


def _probe_names(trees: list[ast.expr], ns: dict) -> tuple[dict, list[str]] | str:
    """Values for free names: the CPU device in device positions, 3 in size positions; a reason if neither."""
    values: dict[str, Any] = {}
    notes = []
    for tree in trees:
        dev = _device_positions(tree)
        for name in sorted(_free_names(tree) - set(ns)):
            if name in values:
                continue
            if name in dev:
                values[name] = torch.device("cpu")
                notes.append(f"`{name}` = cpu")
            elif _in_size_position(tree, name):
                values[name] = 3
                notes.append(f"`{name}` = 3")
            else:
                return f"the expression uses `{name}`, which is not defined at module level"
    return values, notes


def _in_size_position(tree: ast.expr, name: str) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and not isinstance(n.func, ast.Attribute) or (
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)):
            for a in n.args:
                if isinstance(a, ast.Name) and a.id == name:
                    return True
                if isinstance(a, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name for e in a.elts):
                    return True
    return False


def check_leaf_tensor(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    unit = f"<tensor at line {ctx.req.line}>"
    try:
        old_t, new_t = _parse_expr(c["old"]), _parse_expr(c["new"])
    except (KeyError, SyntaxError) as e:
        return Outcome("untestable", f"leaf-tensor contract without parsable old/new expressions ({fmt_exc(e)})", unit)
    ns_old, notes = _namespace(ctx, "old")
    ns_new, _ = _namespace(ctx, "new")
    probes = _probe_names([old_t, new_t], ns_old)
    if isinstance(probes, str):
        return Outcome("untestable", probes + "; only module-level names, devices and sizes can be filled in", unit)
    values, probe_notes = probes
    redirect = _cuda_code(c["old"], c["new"])

    def evaluate(tree: ast.expr, ns: dict) -> torch.Tensor:
        env = dict(ns)
        env.update(values)
        with _quiet(), _default_dtype(torch.float32), seeded(SEED_BUILD), _maybe_redirect(redirect):
            out = _eval(copy.deepcopy(tree), env)
        if not torch.is_tensor(out):
            raise TypeError(f"it gives {type(out).__name__}, not a tensor")
        return out

    try:
        old = evaluate(old_t, ns_old)
    except Exception as e:  # noqa: BLE001
        if is_gpu_error(e):
            return Outcome("untestable", f"needs GPU: the original expression raises {fmt_exc(e)}", unit)
        return Outcome("untestable", f"the original expression raises {fmt_exc(e)}", unit)
    try:
        new = evaluate(new_t, ns_new)
    except Exception as e:  # noqa: BLE001
        return Outcome("failed", f"the rewritten expression raises {fmt_exc(e)}", unit)
    forced = ""
    if old.is_leaf:
        forcer = _ForceCopy()
        forced_t = forcer.visit(copy.deepcopy(old_t))
        if not forcer.count:
            return Outcome("untestable", "the original is already a leaf here and has no device move to force: "
                           "nothing to show on this machine", unit)
        try:
            old = evaluate(forced_t, ns_old)
        except Exception as e:  # noqa: BLE001
            return Outcome("untestable", f"the original with its copy forced raises {fmt_exc(e)}", unit)
        forced = (" On this machine the original's device move returns the tensor itself (a CPU tensor"
                  + (" under the cuda->cpu redirect" if redirect else "") + "), so its copy was forced with `.clone()`, "
                  "as a GPU copies.")
    if old.is_leaf or not old.requires_grad:
        return Outcome("untestable", f"the original is {'a leaf' if old.is_leaf else 'a tensor without grad'} even with "
                       "its copy forced, so the hazard cannot be shown here", unit)
    if not new.is_leaf or not new.requires_grad:
        why = "not a leaf" if not new.is_leaf else "a leaf that does not require grad"
        return Outcome("failed", f"the rewrite is {why} (grad_fn {type(new.grad_fn).__name__ if new.grad_fn else None})",
                       unit)
    if old.dtype != new.dtype or tuple(old.shape) != tuple(new.shape):
        return Outcome("failed", f"the rewrite changes dtype/shape: {old.dtype} {tuple(old.shape)} -> {new.dtype} "
                       f"{tuple(new.shape)}", unit)
    d = rel_diff(old, new)
    if d > 0.0:  # the same draws and the same copies: bit for bit (float64 draws differ by ~1e-8 even at size 5)
        return Outcome("failed", f"the values differ: norm-relative {d:.1e} under the same seed", unit)
    with _quiet():
        lo = projected_loss([old])
        (g_reached,) = torch.autograd.grad(lo, [old], retain_graph=True)
        lo.backward()
        old_grad = old.grad
        projected_loss([new]).backward()
    if old_grad is not None:
        return Outcome("failed", "the original's `.grad` is filled after backward, so there was no hazard", unit)
    if new.grad is None:
        return Outcome("failed", "the rewrite's `.grad` is still None after backward", unit)
    dg = rel_diff(g_reached, new.grad)
    if dg > TOL_F32:
        return Outcome("failed", f"the rewrite's gradient differs from what reached the original: norm-relative {dg:.1e}",
                       unit)
    grad_fn = type(old.grad_fn).__name__ if old.grad_fn is not None else "?"
    detail = (f"the original is a non-leaf ({grad_fn}) whose `.grad` stays None after backward; the rewrite is a leaf "
              f"that requires grad and its `.grad` is now a tensor, equal to the gradient that reached the original "
              f"(norm {_norm(new.grad):.4g}); values (bit for bit), dtype ({str(new.dtype).replace('torch.', '')}) and shape "
              f"{tuple(new.shape)} equal under the same seed (float32 default dtype).{forced}")
    extra = probe_notes + notes
    if extra:
        detail = detail.rstrip(".") + f" Free names filled in: {', '.join(extra)}."
    if c.get("form") == "device" and _random_factory(new_t):
        detail = detail.rstrip(".") + (". On CUDA a random factory with `device=` draws from the CUDA generator, so "
                                       "the values there differ from the original's CPU draw.")
    return Outcome("fixes-hazard", detail, unit)


def _random_factory(tree: ast.expr) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("randn", "rand"):
            return True
    return False


CHECKS = {
    "same-object": check_same_object,
    "leaf-tensor": check_leaf_tensor,
}
