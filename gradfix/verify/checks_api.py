"""Contracts of the parameter and API rules (GF301-GF306). Picked up by `checks.extra_checks`.

- `same-object` (GF301): the deprecated AMP constructor and its replacement build equal objects.
- `leaf-tensor` (GF302): the original is a non-leaf whose `.grad` stays None, the rewrite a leaf
  with the same values that gets a gradient.
- `registers-params` (GF303, GF304): the rewritten module registers what the original left out,
  and computes the same outputs and gradients otherwise.
- `forward-call` (GF305): `m(x)` equals `m.forward(x)` when no hook is registered, and runs hooks.
- `checkpoint-grads` (GF306): with inputs that do not require grad, the block's parameters get
  gradients with `use_reentrant=False` where the reentrant version left them None.

Facts behind them: /work/shared/design/hazards.md ("Further hazards") and verification.md. On a
CPU machine `.to("cpu")`, `.cuda()` under the redirect and `.double()` in a float64 default are
no-ops, so the checks that need a real copy run in float32 and force device moves to copy.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import warnings
from typing import Any

import torch
import torch.nn as nn

from . import source as S
from .runtime import (
    SEED_BUILD, SEED_RUN, Outcome, Untestable, _norm, cuda_redirect, flatten, fmt_exc, is_gpu_error, plural,
    projected_loss, rel_diff, seeded,
)
from .context import Ctx, fixture_hint
from .inputs import _candidate_inputs, _first_known_leaf, _fresh_inputs, infer_input, required_params
from .checks import check_equal
from .inputs import make_leaves
from .module_check import _build
from .units import combine, plan_units

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
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            bound |= {a.arg for a in n.args.args}
        elif isinstance(n, ast.comprehension):
            bound |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.id not in bound and not hasattr(builtins, n.id)}


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


# --------------------------------------------------------------------------- registers-params (GF303, GF304)


def _is_device(a: Any) -> bool:
    return isinstance(a, (str, torch.device))


class ForceDeviceCopy(torch.overrides.TorchFunctionMode):
    """Device moves that return the tensor itself on this machine (`.to("cpu")` of a CPU tensor,
    `.cuda()` under the redirect) return a copy instead, as they do on a GPU."""

    def __init__(self) -> None:
        super().__init__()
        self.forced = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        out = func(*args, **kwargs)
        if args and out is args[0] and torch.is_tensor(out):
            move = func is torch.Tensor.cuda or (
                func is torch.Tensor.to and (any(_is_device(a) for a in args[1:]) or "device" in kwargs))
            if move:
                self.forced += 1
                return out.clone()
        return out


def _tensors_of(obj: Any) -> list:
    """The tensors an attribute holds, in order: a tensor, a module's state, containers of them."""
    if torch.is_tensor(obj):
        return [obj]
    if isinstance(obj, nn.Module) and not isinstance(obj, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
        return list(obj.state_dict(keep_vars=True).values())
    if isinstance(obj, (nn.ModuleDict, dict)):
        return [t for v in obj.values() for t in _tensors_of(v)]
    if isinstance(obj, (nn.ModuleList, nn.Sequential, list, tuple)):
        return [t for v in obj for t in _tensors_of(v)]
    return []


def _modules_of(obj: Any) -> list:
    if isinstance(obj, nn.Module):
        return [obj]
    if isinstance(obj, dict):
        return [m for v in obj.values() for m in _modules_of(v)]
    if isinstance(obj, (list, tuple)):
        return [m for v in obj for m in _modules_of(v)]
    return []


def _param_shape_inputs(models: list, dtype: torch.dtype) -> list[tuple]:
    """Input candidates for modules whose first op is `x @ self.w` on a raw parameter (in its dtype)."""
    shapes: list[tuple] = []
    for m in models:
        for t in list(m.parameters()) + [v for v in vars(m).values() if torch.is_tensor(v)]:
            dt = t.dtype if t.is_floating_point() else dtype
            if t.dim() == 2:
                shapes += [((4, t.shape[0]), dt), ((4, t.shape[1]), dt)]
            elif t.dim() == 1:
                shapes.append(((4, t.shape[0]), dt))
    out = []
    for shape, dt in dict.fromkeys(shapes):
        g = torch.Generator().manual_seed(1234)
        out.append((torch.randn(shape, generator=g, dtype=dt),))
    return out


def _infer(name: str, old: nn.Module, new: nn.Module, dtype: torch.dtype, explain) -> tuple:
    """Like `checks.infer_input`, without deep copies (the original may hold non-leaf tensors, which
    cannot be deep-copied), and with candidates from raw parameter shapes (`x @ self.w`)."""
    req = required_params(type(old).forward, skip_first=True)
    if len(req) != 1:
        return infer_input(name, [old, new], dtype, explain)  # () or its "several arguments" message
    makers = []
    leaf = _first_known_leaf(new) or _first_known_leaf(old)
    if leaf is not None:
        makers += _candidate_inputs(leaf, dtype)
    makers += [lambda c=c: c for c in _param_shape_inputs([new, old], dtype)]
    last: BaseException | None = None
    for make in makers:
        cand = make()
        try:
            with torch.no_grad(), seeded(SEED_RUN), _quiet():
                for m in (old, new):
                    m.eval()(*_fresh_inputs(list(cand)))
            return cand
        except Exception as e:  # noqa: BLE001
            last = e
    raise Untestable(f"input shape unknown for {name}: forward failed on every input inferred from its first layer "
                     f"and parameter shapes (last error {fmt_exc(last) if last else 'none'}); " + fixture_hint(name))


def _leaves(inputs: tuple, requires_grad: bool = True) -> list:
    """Input leaves in their own dtype (float inputs require grad unless told otherwise)."""
    out = []
    for x in inputs:
        if torch.is_tensor(x) and x.is_floating_point():
            out.append(x.detach().clone().requires_grad_(requires_grad))
        elif torch.is_tensor(x):
            out.append(x.detach().clone())
        else:
            out.append(x)
    return out


def _forward_grads(model: nn.Module, leaves: list, mode: str, loose: list, call=None) -> tuple[list, dict, list]:
    """Outputs, parameter gradients (None where autograd gives none) and input gradients of one run
    with the projected test loss; `call` replaces `model(...)` (e.g. `model.forward`)."""
    model.train(mode == "train")
    for m in loose:  # modules `model.train()` does not reach (the original's plain containers)
        m.train(mode == "train")
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    ins = [x for x in leaves if torch.is_tensor(x) and x.requires_grad]
    for t in [p for _, p in named] + ins:
        t.grad = None
    with seeded(SEED_RUN), _quiet():
        xs = _fresh_inputs(leaves)
        out = flatten((call or model)(*xs))
        loss = projected_loss(out)
        if loss is not None and loss.requires_grad:
            loss.backward()  # not autograd.grad: the reentrant checkpoint does not support it
    grads = [None if t.grad is None else t.grad.detach().clone() for t in [p for _, p in named] + ins]
    for t in [p for _, p in named] + ins:
        t.grad = None
    outs = [o.detach().clone() if torch.is_tensor(o) else o for o in out]
    return outs, {n: g for (n, _), g in zip(named, grads[: len(named)])}, grads[len(named):]


def check_registers_params(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    name = c.get("class") or (ctx.analysis.changed_classes[0] if ctx.analysis.changed_classes else None)
    attrs = [str(a) for a in (c.get("attrs") or [])]
    if not name or not attrs:
        return Outcome("untestable", "registers-params contract without class/attrs", name)
    dtype = torch.float32
    force = ForceDeviceCopy()

    def building():
        return _stacked(_quiet(), _default_dtype(dtype), force)

    built = _build_both(ctx, name, building)
    if isinstance(built, Outcome):
        return built
    (old, old_in), (new, _) = built["old"], built["new"]
    if not isinstance(old, nn.Module) or not isinstance(new, nn.Module):
        return Outcome("untestable", f"{name} did not build an nn.Module", name)
    po, pn = dict(old.named_parameters()), dict(new.named_parameters())
    lost = sorted(set(po) - set(pn))
    if lost:
        return Outcome("failed", f"the rewrite loses parameters: {', '.join(lost[:3])}", name)
    mine = lambda n: any(n == a or n.startswith(a + ".") for a in attrs)  # noqa: E731
    already = [n for n in po if mine(n)]
    gained = [n for n in pn if n not in po]
    gained_here = [n for n in gained if mine(n)]
    if not gained_here:
        if already:
            return Outcome("failed", f"the original already registers {', '.join(already[:3])} here, so the rewrite "
                           f"changes nothing that can be shown", name)
        return Outcome("failed", f"the rewrite registers no parameter under {', '.join(attrs)}", name)
    so, sn = old.state_dict(), new.state_dict()
    if set(so) - set(sn):
        return Outcome("failed", f"the rewrite's state_dict lacks {sorted(set(so) - set(sn))[:3]}", name)
    mo, mn = dict(old.named_modules()), dict(new.named_modules())
    if set(mo) - set(mn):
        return Outcome("failed", f"the rewrite loses submodules {sorted(set(mo) - set(mn))[:3]}", name)
    # the attribute's values: equal after the same seeded construction (else copied, and said)
    copied = []
    for a in attrs:
        to, tn = _tensors_of(getattr(old, a, None)), _tensors_of(getattr(new, a, None))
        if len(to) != len(tn) or any(tuple(x.shape) != tuple(y.shape) for x, y in zip(to, tn)):
            return Outcome("failed", f"`{a}` holds different tensors in the two versions ({len(to)} vs {len(tn)})", name)
        for x, y in zip(to, tn):
            if rel_diff(x, y) > 0:
                with torch.no_grad():
                    y.copy_(x)
                copied.append(a)
    try:
        new.load_state_dict(so, strict=False)
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"copying the common weights of {name} failed ({fmt_exc(e)})", name)
    loose = [m for a in attrs for m in _modules_of(getattr(old, a, None)) if not any(m is x for x in mo.values())]
    n_new_keys = len(set(sn) - set(so))
    reg = (f"now registered: {plural(len(po), 'parameter')} -> {len(pn)} ({_names(gained_here)}); state_dict gains "
           f"{plural(n_new_keys, 'key')}; the original's parameters(), what an optimizer is given, lacks them, so "
           f"they are never trained")
    notes = []
    if force.forced:
        notes.append("On this machine `.to(device)`/`.cuda()` of a CPU tensor returns the tensor itself, so "
                     f"construction ran with such moves forced to copy, as on a GPU ({plural(force.forced, 'move')})")
    if copied:
        notes.append(f"the values of {', '.join(dict.fromkeys(copied))} differed after construction and were copied")
    try:
        inputs = old_in if old_in is not None else _infer(name, old, new, dtype, ctx.explain)
    except Untestable as u:
        notes.append(f"forward not compared: {u}")
        return Outcome("fixes-hazard", _sentence(reg) + " " + " ".join(_sentence(n) for n in notes), name)
    leaves = _leaves(inputs)
    worst, where = 0.0, ""
    got_grad: list[str] = []
    for mode in ("eval", "train"):
        try:
            o_out, o_g, o_ig = _forward_grads(old, leaves, mode, loose)
        except Exception as e:  # noqa: BLE001
            if is_gpu_error(e):
                return Outcome("untestable", f"needs GPU: {name} raises {fmt_exc(e)}", name)
            notes.append(f"forward not compared: the original raises {fmt_exc(e)} ({mode} mode)")
            return Outcome("fixes-hazard", _sentence(reg) + " " + " ".join(_sentence(n) for n in notes), name)
        try:
            n_out, n_g, n_ig = _forward_grads(new, leaves, mode, [])
        except Exception as e:  # noqa: BLE001
            return Outcome("failed", f"new version raises {ctx.explain(e, name)} ({mode} mode), while the original runs",
                           name)
        if len(o_out) != len(n_out):
            return Outcome("failed", f"the number of outputs changes ({mode} mode)", name)
        d, w = _largest_diff(o_out, n_out, o_ig, n_ig, f"{mode} mode")
        if d > worst:
            worst, where = d, w
        for n, g in o_g.items():
            d = rel_diff(g, n_g.get(n))
            if d > worst:
                worst, where = d, f"grad of {n} ({mode} mode)"
        got_grad += [n for n in gained_here if n_g.get(n) is not None]
    if worst > TOL_F32:
        return Outcome("failed", f"{reg}, but {where} differs: norm-relative {worst:.1e}", name)
    got = list(dict.fromkeys(got_grad))
    grads = (f"{plural(len(got), 'new parameter')} now receive{'s' if len(got) == 1 else ''} gradients" if got
             else "the new parameters get no gradient from forward (unused there or frozen)")
    common = f"outputs and the gradients of {plural(len(po), 'common parameter')}" if po else "outputs and input gradients"
    detail = (f"{reg}; {common} agree in eval and train mode (fp32, largest norm-relative difference {worst:.1e}); "
              f"{grads}.")
    if loose:
        detail += (f" The original's {plural(len(loose), 'unregistered module')} were switched to eval/train by hand, "
                   f"which `model.eval()` does not do.")
    if notes:
        detail += " " + " ".join(_sentence(n) for n in notes)
    return Outcome("fixes-hazard", detail, name)


def _names(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _sentence(s: str) -> str:
    s = s.strip()
    return s if s.endswith(".") else s + "."


# --------------------------------------------------------------------------- shared: two built versions


def _build_pair(ctx: Ctx, name: str) -> tuple[nn.Module, nn.Module, tuple | None] | Outcome:
    """Both versions of a changed module class, in the check dtype, weights copied old -> new."""
    built = _build_both(ctx, name, _quiet)
    if isinstance(built, Outcome):
        return built
    (old, old_in), (new, _) = built["old"], built["new"]
    if not isinstance(old, nn.Module) or not isinstance(new, nn.Module):
        return Outcome("untestable", f"{name} did not build an nn.Module", name)
    old.to(ctx.dtype)
    new.to(ctx.dtype)
    try:
        new.load_state_dict(old.state_dict())
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"state mapping needed: copying the weights of {name} failed ({fmt_exc(e)})", name)
    return old, new, old_in


# --------------------------------------------------------------------------- checkpoint-grads (GF306)


def check_checkpoint_grads(ctx: Ctx) -> Outcome:
    units, outcomes = plan_units(ctx)
    for u in units:
        outcomes.append(_checkpoint_unit(ctx, u))
    return combine(outcomes)


def _checkpoint_unit(ctx: Ctx, name: str) -> Outcome:
    pair = _build_pair(ctx, name)
    if isinstance(pair, Outcome):
        return pair
    old, new, old_in = pair
    try:
        inputs = old_in if old_in is not None else infer_input(name, [old, new], ctx.dtype, ctx.explain)
    except Untestable as u:
        return Outcome("untestable", str(u), name)
    worst, where = 0.0, ""
    gained: dict[str, str] = {}
    runs = 0
    for rg in (True, False):
        leaves = _leaves(tuple(x.to(ctx.dtype) if torch.is_tensor(x) and x.is_floating_point() else x
                               for x in inputs), requires_grad=rg)
        label = "inputs that require grad" if rg else "inputs that do not require grad"
        for mode in ("eval", "train"):
            try:
                o_out, o_g, o_ig = _forward_grads(old, leaves, mode, [])
            except Exception as e:  # noqa: BLE001
                return Outcome("untestable", f"the original raises {ctx.explain(e, name)} ({mode} mode, {label})", name)
            try:
                n_out, n_g, n_ig = _forward_grads(new, leaves, mode, [])
            except Exception as e:  # noqa: BLE001
                return Outcome("failed", f"new version raises {ctx.explain(e, name)} ({mode} mode, {label}), while the "
                               f"original runs", name)
            runs += 1
            if len(o_out) != len(n_out):
                return Outcome("failed", f"the number of outputs changes ({mode} mode)", name)
            d, w = _largest_diff(o_out, n_out, o_ig, n_ig, f"{mode} mode, {label}")
            if d > worst:
                worst, where = d, w
            for p, a in o_g.items():
                b = n_g.get(p)
                if a is None and b is not None:
                    gained.setdefault(p, label)
                elif a is not None and b is None:
                    return Outcome("failed", f"the gradient of {p} is a tensor in the original but None in the rewrite "
                                   f"({mode} mode, {label})", name)
                elif a is not None:
                    d = rel_diff(a, b)
                    if d > worst:
                        worst, where = d, f"grad of {p} ({mode} mode, {label})"
    if worst > ctx.tol:
        return Outcome("failed", f"{where} differs: norm-relative {worst:.1e}", name)
    agree = (f"outputs and every gradient the original computed agree (fp64, eval and train mode, inputs with and "
             f"without requires_grad; largest norm-relative difference {worst:.1e})")
    if gained:
        names = list(gained)
        return Outcome("fixes-hazard", f"with inputs that do not require grad, the reentrant original leaves the "
                       f"gradients of {_names(names)} None; with use_reentrant=False they are tensors; {agree}", name)
    return Outcome("equivalent", f"{agree}; no gradient was lost by the reentrant variant here", name)


# --------------------------------------------------------------------------- forward-call (GF305)


def _hook_count(model: nn.Module) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def _forward_crash(model, leaves, mode: str, recv: str, unit: str, error: BaseException, compared: list[str],
                   worst: float, where: str, tol: float, hooks: int) -> Outcome:
    """`m.forward(x)` ran, then raised when run again; `fixes-crash` when `m(x)` keeps running and,
    where both ran, the two agreed or the module's hooks explain the difference."""
    try:
        _forward_grads(model, leaves, mode, [])
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"`{recv}.forward(x)` raises {fmt_exc(error)} when run again ({mode} mode), "
                       f"and so does `{recv}(x)` ({fmt_exc(e)})", unit)
    first = f"on the first run ({', '.join(compared)} mode)"
    if worst > tol and not hooks:
        return Outcome("failed", f"`{recv}(x)` and `{recv}.forward(x)` differ {first} without any hook: {where} "
                       f"norm-relative {worst:.1e}", unit)
    agree = (f"{where} differs on the first run (norm-relative {worst:.1e}): `{recv}` carries "
             f"{plural(hooks, 'forward hook')}, which only the call runs" if worst > tol else
             f"{first} outputs, parameter and input gradients agree (largest norm-relative difference {worst:.1e})")
    return Outcome("fixes-crash", f"`{recv}.forward(x)` raises {fmt_exc(error)} when run again ({mode} mode: the "
                   f"hooks that recompute its state are skipped), `{recv}(x)` runs; {agree}", unit)


def check_forward_call(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    recv = str(c.get("receiver") or "model")
    if c.get("in_class") or (ctx.analysis.changed_functions and
                             any(ctx.fixture(f) is not None for f in ctx.analysis.changed_functions)):
        out = check_equal(ctx)
        if out.verdict == "equivalent":
            out = Outcome(out.verdict, out.detail.rstrip(".") + "; the module is now called, so its hooks run", out.unit)
        return out
    unit = f"<{c.get('call_new') or recv + '(...)'}>"
    setup = c.get("setup")
    if not setup or "." in recv:
        where = ", ".join(ctx.analysis.changed_functions) or "module-level code"
        return Outcome("untestable", f"`{recv}` is not built by an assignment the verifier can run (it comes from "
                       f"outside {where}); " + fixture_hint(ctx.analysis.changed_functions[0] if
                                                            ctx.analysis.changed_functions else recv, "function"), unit)
    from .checks_step import _setup_namespace

    try:
        with _quiet():
            _ns, model = _setup_namespace(ctx, "old", setup, recv)
    except Untestable:
        raise
    except Exception as e:  # noqa: BLE001
        if is_gpu_error(e):
            return Outcome("untestable", f"needs GPU: `{setup.splitlines()[0]}` raises {fmt_exc(e)}", unit)
        return Outcome("untestable", f"building `{recv}` raises {ctx.explain(e, recv)}", unit)
    try:
        inputs = infer_input(recv, [model], ctx.dtype, ctx.explain)
    except Untestable as u:
        return Outcome("untestable", str(u), unit)
    leaves = make_leaves(inputs, ctx.dtype)
    hooks = _hook_count(model)
    worst, where = 0.0, ""
    compared: list[str] = []
    for mode in ("eval", "train"):
        try:
            f_out, f_g, f_ig = _forward_grads(model, leaves, mode, [], call=model.forward)
        except Exception as e:  # noqa: BLE001
            if compared:
                # it ran once and fails when run again: hook-based weight_norm's weight is computed by a
                # pre-hook that the direct call skips, so the second backward reuses a freed graph
                return _forward_crash(model, leaves, mode, recv, unit, e, compared, worst, where, ctx.tol, hooks)
            return Outcome("untestable", f"`{recv}.forward(x)` raises {fmt_exc(e)} on the inferred input", unit)
        try:
            c_out, c_g, c_ig = _forward_grads(model, leaves, mode, [])
        except Exception as e:  # noqa: BLE001
            return Outcome("failed", f"`{recv}(x)` raises {fmt_exc(e)} ({mode} mode), while `{recv}.forward(x)` runs",
                           unit)
        pairs = [(f"output {i}", a, b) for i, (a, b) in enumerate(zip(f_out, c_out))]
        pairs += [(f"grad of {n}", g, c_g.get(n)) for n, g in f_g.items()]
        pairs += [("input grad", a, b) for a, b in zip(f_ig, c_ig)]
        for label, a, b in pairs:
            d = rel_diff(a, b)
            if d > worst:
                worst, where = d, f"{label} ({mode} mode)"
        compared.append(mode)
    built = setup.splitlines()[0]
    if _ns.get("__gf_prior_build"):  # the setup only converted it: the file's own build ran first (call_sites.py)
        built = f"{_ns['__gf_prior_build']}` then `{built}"
    if worst > ctx.tol:
        if hooks:
            return Outcome("changes-behaviour", f"`{recv}` (built by `{built}`) carries {plural(hooks, 'forward hook')}: "
                           f"`{recv}(x)` runs {'it' if hooks == 1 else 'them'} and `{recv}.forward(x)` did not, so "
                           f"{where} differs (norm-relative {worst:.1e}); without hooks the two agree by construction",
                           unit)
        return Outcome("failed", f"`{recv}(x)` and `{recv}.forward(x)` differ without any hook: {where} norm-relative "
                       f"{worst:.1e}", unit)
    seen: list[int] = []
    handle = model.register_forward_hook(lambda *a: seen.append(1))
    try:
        with torch.no_grad(), seeded(SEED_RUN), _quiet():
            model.forward(*_fresh_inputs(leaves))
            direct = len(seen)
            model(*_fresh_inputs(leaves))
            called = len(seen) - direct
    finally:
        handle.remove()
    hook_txt = (f"a test forward hook ran {plural(called, 'time')} through `{recv}(x)` and {plural(direct, 'time')} "
                f"through `{recv}.forward(x)`")
    extra = f" ({plural(hooks, 'registered hook')} leave the result unchanged)" if hooks else ""
    return Outcome("equivalent", f"`{recv}` built by `{built}`, input inferred from its first layer: `{recv}(x)` "
                   f"equals `{recv}.forward(x)` (outputs, parameter and input gradients, eval and train mode, fp64, "
                   f"largest norm-relative difference {worst:.1e}){extra}; {hook_txt}", unit)


CHECKS = {
    "same-object": check_same_object,
    "leaf-tensor": check_leaf_tensor,
    "registers-params": check_registers_params,
    "checkpoint-grads": check_checkpoint_grads,
    "forward-call": check_forward_call,
}


def _stacked(*managers):
    """One context manager entering `managers` in order."""
    stack = contextlib.ExitStack()
    for m in managers:
        stack.enter_context(m)
    return stack


def _build_both(ctx, name: str, context) -> "dict[str, Any] | Outcome":
    """The original and the rewritten unit `name`, each built inside `context()`; an Outcome
    (untestable or failed, with the reason) when either cannot be built."""
    built: dict[str, Any] = {}
    for tag in ("old", "new"):
        with _quiet():
            mod = ctx.module(tag)
        try:
            with context():
                built[tag] = _build(ctx, name, mod)
        except Untestable as u:
            return Outcome("untestable", str(u), name)
        except Exception as e:  # noqa: BLE001
            if is_gpu_error(e):
                return Outcome("untestable", f"needs GPU: constructing {name} raises {fmt_exc(e)}", name)
            if tag == "old":
                why = ctx.explain(e, name)
                hint = "" if "fixture_" in why else "; " + fixture_hint(name)
                return Outcome("untestable", f"constructing the original {name} raises {why}{hint}", name)
            return Outcome("failed", f"new version raises {ctx.explain(e, name)} when constructing {name}", name)
    return built


def _largest_diff(o_out, n_out, o_ig, n_ig, context: str) -> tuple[float, str]:
    """The largest norm-relative difference over outputs and input gradients, and where."""
    worst, where = 0.0, ""
    for i, (a, b) in enumerate(zip(o_out, n_out)):
        d = rel_diff(a, b)
        if d > worst:
            worst, where = d, f"output {i} ({context})"
    for a, b in zip(o_ig, n_ig):
        d = rel_diff(a, b)
        if d > worst:
            worst, where = d, f"input grad ({context})"
    return worst, where
