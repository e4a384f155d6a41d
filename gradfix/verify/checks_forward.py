"""The forward-call contract (GF305): `m(x)` equals `m.forward(x)` when no hook is registered, and runs hooks.

Picked up by `checks.extra_checks`. The module is the project's own, built by the setup the rule recorded (held
builds included, held_builds.py) and given an input inferred from its first layer. The check runs in fp64; a module
whose forward makes float32 tensors of its own (`torch.tensor(obs, dtype=torch.float)`) raises dtype errors there on
every input, and is then built again and compared in fp32 with the fp32 tolerance (the detail says so): both calls
run the same operations in the same order, so a hook is what a difference can come from in either precision.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from .runtime import SEED_RUN, TOL32, Outcome, Untestable, _RetryFp32, fmt_exc, is_gpu_error, plural, rel_diff, seeded
from .context import Ctx, fixture_hint
from .inputs import _fresh_inputs, infer_input, make_leaves
from .checks import check_equal
from .checks_expr import _quiet
from .checks_api import _forward_grads

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
    """The check below; a direct check's verdict on a rewrite that changed more than the call (call_form.py), or an
    `equivalent` on a build that lacks a hook the file attaches elsewhere (skipped_hooks.py), is `untestable`."""
    from .call_form import call_form_only
    from .skipped_hooks import skipped_hook

    c = ctx.req.contract
    out = _check_forward_call(ctx)
    if out.verdict in ("equivalent", "fixes-crash") and not _runs_rewritten(ctx):
        # the direct checks compare the call forms on the original's module: a proof of the rewrite only when
        # the rewrite is that call's form and nothing else (call_form.py)
        other = call_form_only(ctx.analysis.old_tree, ctx.analysis.new_tree, str(c.get("call_old") or ""),
                               ctx.req.line)
        if other is not None:
            return Outcome("untestable", f"{out.detail.rstrip('.')}; but {other}", out.unit)
    if out.verdict != "equivalent":
        return out
    missed = skipped_hook(ctx.analysis.old_tree, str(c.get("setup") or ""), ctx.req.path, ctx.req.project_root,
                          ctx.req.line)
    if missed is None:
        return out
    recv = str(c.get("receiver") or "model")
    return Outcome("untestable", f"`{recv}(x)` equals `{recv}.forward(x)` on the module the check built, but the file "
                   f"attaches a hook (or hook-based wrapper) in code the check does not run: {missed}; on the file's "
                   f"own object the two calls may differ", out.unit)


def _runs_rewritten(ctx: Ctx) -> bool:
    """The call sits in a module's method, or in a function a fixture builds: `check_equal` runs both versions."""
    return bool(ctx.req.contract.get("in_class") or (ctx.analysis.changed_functions and any(
        ctx.fixture(f) is not None for f in ctx.analysis.changed_functions)))


def _check_forward_call(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    recv = str(c.get("receiver") or "model")
    if _runs_rewritten(ctx):
        out = check_equal(ctx)
        if out.verdict == "equivalent":
            out = Outcome(out.verdict, out.detail.rstrip(".") + "; the module is now called, so its hooks run", out.unit)
        return out
    unit = f"<{c.get('call_new') or recv + '(...)'}>"
    setup = c.get("setup")
    if setup and "." not in recv:  # built inside a unittest method from `self` (unittest_build.py)
        out = _forward_in_test_method(ctx, setup, recv, unit)
        if out is not None:
            return out
    if not setup or "." in recv:
        methods = [f"{c}.{m}" for c, ms in ctx.analysis.changed_methods.items() for m in ms if m != "<class body>"]
        where = ", ".join(list(ctx.analysis.changed_functions) + methods) or "module-level code"
        return Outcome("untestable", f"`{recv}` is not built by an assignment the verifier can run (it comes from "
                       f"outside {where}); " + fixture_hint(ctx.analysis.changed_functions[0] if
                                                            ctx.analysis.changed_functions else recv, "function"), unit)
    out = _forward_built(ctx, setup, recv, unit)
    if out.verdict == "untestable" and out.detail.startswith(f"building `{recv}` raises"):
        from .branch_builds import branches, combine  # `A if <unknown> else B`: each branch (branch_builds.py)

        split = branches(setup, recv, out.detail)
        if split is not None:
            setups, cond = split
            return combine([_forward_built(ctx, s, recv, unit) for s in setups], cond, recv, Outcome)
    return out


def _forward_built(ctx: Ctx, setup: str, recv: str, unit: str) -> Outcome:
    """`recv` built by `setup` and its two calls compared, in fp64, or in fp32 when fp64 meets dtype errors."""
    try:
        return _forward_of_setup(ctx, setup, recv, unit)
    except _RetryFp32:  # float32 tensors made inside forward meet fp64 weights: build and compare again in fp32
        pass
    saved, default = (ctx.dtype, ctx.tol), torch.get_default_dtype()
    ctx.dtype, ctx.tol = torch.float32, max(ctx.tol, TOL32)
    torch.set_default_dtype(torch.float32)
    try:
        out = _forward_of_setup(ctx, setup, recv, unit)
    except _RetryFp32:  # not raised in fp32 (infer_input says why instead); kept for a clear reason if it is
        return Outcome("untestable", f"`{recv}` raises dtype errors on every input tried, in fp64 and in fp32", unit)
    finally:
        ctx.dtype, ctx.tol = saved
        torch.set_default_dtype(default)
    if out.verdict != "untestable":
        ctx.weak_units.append(unit)
    return out


def _forward_of_setup(ctx: Ctx, setup: str, recv: str, unit: str) -> Outcome:
    """`recv` built by `setup` in `ctx.dtype`, its input inferred, the two calls compared; _RetryFp32 when every
    fp64 input raised dtype errors."""
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
    notes: dict = {}
    try:
        inputs = infer_input(recv, [model], ctx.dtype, ctx.explain, notes=notes)
    except Untestable as u:
        # no layer tells the shape: the call's own arguments, as the file makes them (call_inputs.py)
        from .call_inputs import call_inputs

        made = call_inputs(ctx.analysis.old_tree, str(ctx.req.contract.get("call_old") or ""), ctx.req.line, _ns,
                           ctx.dtype, ctx.req.path or "<call>")
        if made is None:
            return Outcome("untestable", str(u), unit)
        inputs, notes["input"] = made
        # a notebook's later cells rebind the names the build reads: built again as they stand at the build
        from .call_inputs import names_read, setup_line, values_at

        at = setup_line(ctx.analysis.old_tree, setup, ctx.req.line)
        then = values_at(ctx.analysis.old_tree, at, _ns, names_read(setup), ctx.req.path or "<setup>") if at else {}
        if then:
            with _quiet():
                _ns, model = _setup_namespace(ctx, "old", setup, recv, overlay=then)
            sets = ", ".join(f"{k} = {v!r}"[:40] for k, v in then.items())
            notes["input"] += f"; `{recv}` built with `{sets}` as they stand before line {at} (later code rebinds them)"
    leaves = make_leaves(inputs, ctx.dtype)
    lines = setup.splitlines()
    built = lines[0]
    if _ns.get("__gf_prior_build"):  # the setup only converted it: the file's own build ran first (held_builds.py)
        built = f"{_ns['__gf_prior_build']}` then `{built}"
    passed = f"{recv} = "
    if len(lines) > 1 and lines[-1].startswith(passed) and lines[-1][len(passed):].isidentifier():
        built += f"`, passed as `{recv}` (`{lines[-1]}`)"  # a helper's parameter: the one build its callers pass
    else:
        built += "`"
    how = f"input {notes['input']}" if notes.get("input") else "input inferred from its first layer"
    return _compare_call(ctx, model, leaves, {}, recv, unit, f"`{recv}` built by `{built}, {how}")


def _forward_in_test_method(ctx: Ctx, setup: str, recv: str, unit: str) -> Outcome | None:
    """`generator.forward(self.sample)` in a unittest method, `generator` built there from `self`: the TestCase
    after its setUp() builds it, and the call's own arguments are the input (unittest_build.py). In fp64 when the
    original runs so (a first build, run once, tells), else in the test's own dtypes with the fp32 tolerance (1e-4).
    None: not that form."""
    from .runtime import SEED_BUILD, TOL32
    from .unittest_build import build_in_test_method

    c = ctx.req.contract

    def build():
        with _quiet(), seeded(SEED_BUILD):
            tu = build_in_test_method(ctx.analysis.old_tree, ctx.analysis.changed_methods, ctx.load_fresh("old"),
                                      setup, recv, c.get("call_old"))
        if tu is not None and not isinstance(tu.obj, nn.Module):
            raise Untestable(f"the setup does not bind an nn.Module named '{recv}' ({tu.note})")
        return tu

    def cast(tu, dtype):
        tu.obj.to(dtype)
        kwargs = {k: (v.detach().to(dtype) if torch.is_tensor(v) and v.is_floating_point() else v)
                  for k, v in tu.kwargs.items()}
        return make_leaves(tu.args, dtype), kwargs

    try:
        tu = build()
        if tu is None:
            return None
        leaves, kwargs = cast(tu, ctx.dtype)
        try:
            with torch.no_grad(), seeded(SEED_RUN), _quiet():
                tu.obj.forward(*_fresh_inputs(leaves), **_fresh_kwargs(kwargs))
            fp64 = True
        except Exception:  # noqa: BLE001 - e.g. the test's own fp32 tensors meet fp64 weights: run as the test does
            fp64 = False
        tu = build()  # afresh: the probe ran it once
    except Untestable as u:
        return Outcome("untestable", str(u), unit)
    if fp64:
        leaves, kwargs = cast(tu, ctx.dtype)
        return _compare_call(ctx, tu.obj, leaves, kwargs, recv, unit, tu.note)
    leaves = [x.detach().clone().requires_grad_(True) if torch.is_tensor(x) and x.is_floating_point() else x
              for x in tu.args]
    tol = ctx.tol
    ctx.tol = max(ctx.tol, TOL32)
    try:
        out = _compare_call(ctx, tu.obj, leaves, dict(tu.kwargs), recv, unit, tu.note)
    finally:
        ctx.tol = tol
    if out.verdict != "untestable":
        ctx.weak_units.append(unit)
    return out


def _fresh_kwargs(kwargs: dict) -> dict:
    return dict(zip(kwargs, _fresh_inputs(list(kwargs.values()))))


def _compare_call(ctx: Ctx, model: nn.Module, leaves: list, kwargs: dict, recv: str, unit: str,
                  how: str) -> Outcome:
    """`recv(x)` against `recv.forward(x)` on `leaves` (and `kwargs`), eval and train mode, then a test hook shows
    that only the call runs hooks. `how` says how the module and its input were made."""
    hooks = _hook_count(model)
    worst, where = 0.0, ""
    compared: list[str] = []
    for mode in ("eval", "train"):
        try:
            f_out, f_g, f_ig = _forward_grads(model, leaves, mode, [], call=_with(model.forward, kwargs))
        except Exception as e:  # noqa: BLE001
            if compared:
                # it ran once and fails when run again: hook-based weight_norm's weight is computed by a
                # pre-hook that the direct call skips, so the second backward reuses a freed graph
                return _forward_crash(model, leaves, mode, recv, unit, e, compared, worst, where, ctx.tol, hooks)
            from .backward_fails import same_failure  # the module's own backward raises in both call forms

            alike = same_failure(model, leaves, lambda: _fresh_kwargs(kwargs), recv, unit, how, ctx.tol)
            if alike is not None:
                return alike
            return Outcome("untestable", f"`{recv}.forward(x)` raises {fmt_exc(e)} on its input ({how})", unit)
        try:
            c_out, c_g, c_ig = _forward_grads(model, leaves, mode, [], call=_with(model, kwargs))
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
    if worst > ctx.tol:
        if hooks:
            return Outcome("changes-behaviour", f"{how}: `{recv}` carries {plural(hooks, 'forward hook')}: "
                           f"`{recv}(x)` runs {'it' if hooks == 1 else 'them'} and `{recv}.forward(x)` did not, so "
                           f"{where} differs (norm-relative {worst:.1e}); without hooks the two agree by construction",
                           unit)
        return Outcome("failed", f"`{recv}(x)` and `{recv}.forward(x)` differ without any hook: {where} norm-relative "
                       f"{worst:.1e}", unit)
    prec = "fp64" if ctx.dtype == torch.float64 else "fp32"
    try:
        direct, called = _hook_runs(model, leaves, kwargs, torch.no_grad)
    except Exception:  # noqa: BLE001 - a forward that takes autograd.grad itself (a log-det) needs grad mode
        direct, called = _hook_runs(model, leaves, kwargs, torch.enable_grad)
    hook_txt = (f"a test forward hook ran {plural(called, 'time')} through `{recv}(x)` and {plural(direct, 'time')} "
                f"through `{recv}.forward(x)`")
    extra = f" ({plural(hooks, 'registered hook')} leave the result unchanged)" if hooks else ""
    return Outcome("equivalent", f"{how}: `{recv}(x)` "
                   f"equals `{recv}.forward(x)` (outputs, parameter and input gradients, eval and train mode, {prec}, "
                   f"largest norm-relative difference {worst:.1e}){extra}; {hook_txt}", unit)


def _hook_runs(model: nn.Module, leaves: list, kwargs: dict, mode) -> tuple[int, int]:
    """How often a test forward hook runs through `model.forward(x)` and through `model(x)`, under `mode`."""
    seen: list[int] = []
    handle = model.register_forward_hook(lambda *a: seen.append(1))
    try:
        with mode(), seeded(SEED_RUN), _quiet():
            model.forward(*_fresh_inputs(leaves), **_fresh_kwargs(kwargs))
            direct = len(seen)
            model(*_fresh_inputs(leaves), **_fresh_kwargs(kwargs))
            return direct, len(seen) - direct
    finally:
        handle.remove()


def _with(fn, kwargs: dict):
    """`fn` called with fresh copies of `kwargs` after the positional inputs."""
    if not kwargs:
        return fn
    return lambda *xs: fn(*xs, **_fresh_kwargs(kwargs))


CHECKS = {"forward-call": check_forward_call}
