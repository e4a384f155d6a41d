"""The checks themselves. Imported only by the worker process (this module imports torch).

`run_request(dict) -> dict` runs one VerifyRequest (as JSON data) and returns a VerifyResult
(as JSON data). It is called in a forked child of the worker, and once in the worker
itself to warm up torch before the first fork.

Outline (see /work/shared/design/verification.md for the measured facts behind it):
- `changes.analyze` finds the changed top-level classes/functions/constants; `plan_units`
  turns them into units: changed nn.Module classes, classes that reach a changed function or
  constant, functions with a fixture; module-level code is not executed (except by the scale
  contract, which runs one iteration of a script's training loop: script_loop).
- Each version is exec'd from its stripped AST into its own module (in sys.modules during
  the exec), in fp64 (`set_default_dtype`), under the cuda->cpu redirect when the code
  targets CUDA.
- `module_check`: same seed for both constructions, compared, then state copied old->new, input inferred
  from the first Conv/Linear/Embedding/RNN leaf (or a fixture), eval and train runs with a
  fresh non-leaf input clone and a fixed random projection as the test loss; outputs,
  parameter grads, input grads and buffers compared by norm-relative error (1e-9 in fp64).
  An original that breaks backward with an in-place error is rerun under
  `allow_mutation_on_saved_tensors` to get its intended result ("fixes-crash").
- Contracts: equal (here), scale (checks_scale), clamp-moved and gains-grad (checks_step), the loop
  and API contracts (checks_loop, checks_expr, checks_api); `extra_checks` finds them.
- Soundness: a verdict other than untestable needs every changed statement to have run in its
  version (`coverage`); `hazards` decides fixes-hazard vs changes-behaviour from the original's
  own numbers.
"""
from __future__ import annotations

import ast
import os
import sys
from typing import Callable

import torch
from dataclasses import replace

from . import source as S
from . import changes as CH
from .api import VerifyRequest
from .runtime import FailedCheck, Outcome, Untestable, _sentence, cuda_redirect, fmt_exc
from .context import Ctx, fixture_hint
from .coverage import Hits, changed_statements, run_by_snippet
from .units import combine, plan_units
from .hazards import FD_TOL, fd_discrepancy
from .inputs import make_leaves
from .module_check import module_check
from .unit_build import _build, infer_unit_input


# --------------------------------------------------------------------------- contracts


def check_equal(ctx: Ctx) -> Outcome:
    if ctx.analysis.identical:
        return Outcome("equivalent", "the rewrite does not change the code (only formatting or comments differ)", None)
    units, outcomes = plan_units(ctx)
    for u in units:
        outcomes.append(module_check(ctx, u))
    return combine(outcomes)



# --------------------------------------------------------------------------- entry point


def _run(req: VerifyRequest) -> Outcome:
    try:
        old_tree = ast.parse(req.original)
    except SyntaxError as e:
        return Outcome("untestable", f"the original file does not parse: {fmt_exc(e)} (line {e.lineno})", None)
    try:
        new_tree = ast.parse(req.rewritten)
    except SyntaxError as e:
        return Outcome("failed", f"the rewritten file does not parse: {fmt_exc(e)} (line {e.lineno})", None)
    analysis = CH.analyze(old_tree, new_tree, req.original, req.rewritten)
    contract = req.contract or {"kind": "equal"}
    kind = contract.get("kind", "equal")
    snippets = [str(contract.get(k) or "") for k in ("setup", "step_old", "step_new", "call", "expr_old", "expr_new")]
    stripped = {"old": S.strip_module(old_tree), "new": S.strip_module(new_tree)}
    ctx = Ctx(
        req=req,
        analysis=analysis,
        stripped=stripped,
        # The note goes on whenever the file targets CUDA; the redirect mode (which costs a
        # Python call per torch op) is only pushed when code that will run mentions cuda.
        redirect=S.uses_cuda(old_tree, new_tree, *snippets),
    )
    redirect_active = ctx.redirect and (
        stripped["old"].uses_cuda() or stripped["new"].uses_cuda() or S.uses_cuda(*snippets)
    )
    if kind == "reference":
        return check_reference(req)
    checks: dict[str, Callable[[Ctx], Outcome]] = {
        "equal": check_equal,
        "fd-probe": check_fd_probe,
    }
    if kind not in checks:  # the other kinds' modules load only when needed (libcst costs ~0.5 s cold)
        checks.update(extra_checks(kind))
    if kind not in checks:
        why = "; ".join(f"{m} cannot be imported in {sys.executable}: {e}" for m, e in UNAVAILABLE.items())
        return Outcome("untestable", f"unknown contract kind {kind!r}" + (f" ({why})" if why else ""), None)
    if analysis.identical and kind == "equal":
        return Outcome("equivalent", "the rewrite does not change the code (only formatting or comments differ)", None)
    ctx.required = _required_statements(req, old_tree, new_tree, kind, snippets)
    ctx.coverage = Hits() if ctx.required else None
    with cuda_redirect(redirect_active):
        default_unit = ", ".join(analysis.changed_classes + analysis.changed_functions) or None
        try:
            out = checks[kind](ctx)
        except Untestable as u:
            out = Outcome("untestable", str(u), default_unit)
        except FailedCheck as f:
            out = Outcome("failed", str(f), default_unit)
    return ctx.finish(_require_coverage(ctx, out))


# Contracts that run the changed code from the contract itself (the loop's operations rendered on a
# synthetic model, an expression evaluated in isolation): their coverage holds by construction.
DIRECT_KINDS = {"train-loop", "same-object", "leaf-tensor"}


def _required_statements(req: VerifyRequest, old_tree: ast.Module, new_tree: ast.Module, kind: str,
                         snippets: list[str]) -> dict:
    if kind in DIRECT_KINDS or (kind == "forward-call" and not req.contract.get("in_class")):
        return {}
    old, new = changed_statements(req.original, req.rewritten, old_tree, new_tree)
    required = {"old": [s for s in old if not run_by_snippet(s, snippets)],
                "new": [s for s in new if not run_by_snippet(s, snippets)]}
    return required if required["old"] or required["new"] else {}


def _require_coverage(ctx: Ctx, out: Outcome) -> Outcome:
    """No verdict but `untestable` unless every changed statement ran in its version."""
    if out.verdict in ("untestable", "failed") or out.direct:
        return out
    missing = ctx.uncovered()
    if not missing:
        return out
    tag, stmt = missing[0]
    which = "original" if tag == "old" else "rewrite"
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    unit = out.unit or "the unit"
    return Outcome(
        "untestable",
        f"the changed line did not run on the inputs tried (define a fixture that reaches it): line {stmt.first} of "
        f"the {which}, `{stmt.text[:80]}`{more}, never ran (batch sizes 4, 128 and 1, eval and train mode); "
        f"without it running, the two versions compute the same thing here by construction. "
        + fixture_hint(unit.split(",")[0].strip() if out.unit else "Unit"),
        out.unit,
    )


UNAVAILABLE: dict[str, str] = {}  # checks_* modules that could not be imported here, and why


_FOUND: dict[str, Callable[[Ctx], Outcome]] = {}
_LOADED: set[str] = set()
_LAST = ("checks_loop",)  # imports libcst (about 0.5 s cold): loaded only for its kinds, or for all


def extra_checks(kind: str | None = None) -> dict[str, Callable[[Ctx], Outcome]]:
    """Contract kinds defined in other modules of this package: each `gradfix/verify/checks_*.py`
    exports `CHECKS = {"kind": check_function}` (a check takes a Ctx and returns an Outcome).
    With `kind`, modules are imported only until one defines it (the loop checks' module last), so
    that the first verdict of another kind does not wait for libcst."""
    import importlib
    import pkgutil

    if kind is not None and kind in _FOUND:
        return _FOUND
    package = os.path.dirname(__file__)
    names = sorted(m.name for m in pkgutil.iter_modules([package]) if m.name.startswith("checks_"))
    for name in sorted(names, key=lambda n: (n in _LAST, n)):
        if name in _LOADED:
            continue
        _LOADED.add(name)
        try:
            module = importlib.import_module(f"gradfix.verify.{name}")
        except ImportError as e:  # e.g. libcst does not load in the project's interpreter
            UNAVAILABLE[name] = fmt_exc(e)
            continue
        _FOUND.update(getattr(module, "CHECKS", {}))
        if kind is not None and kind in _FOUND:
            break
    return _FOUND


def check_fd_probe(ctx: Ctx) -> Outcome:
    """Internal (`reference`): does autograd disagree with finite differences in the original but
    not in the rewrite? That is the mark of a write autograd cannot see."""
    units, _ = plan_units(ctx)
    for name in units:
        try:
            built = {tag: _build(ctx, name, ctx.module(tag)) for tag in ("old", "new")}
            (old, old_in), (new, _) = built["old"], built["new"]
            if isinstance(old, torch.nn.Module):
                old.to(ctx.dtype)
                new.to(ctx.dtype)
            inputs = old_in if old_in is not None else infer_unit_input(ctx, name, old, new)
        except Exception as e:  # noqa: BLE001
            return Outcome("changes-behaviour", f"finite differences could not be run on {name} ({fmt_exc(e)})", name)
        leaves = make_leaves(inputs, ctx.dtype)
        d_old, d_new = fd_discrepancy(old, leaves), fd_discrepancy(new, leaves)
        if d_old is None or d_new is None:
            continue
        if d_old > FD_TOL and d_new <= FD_TOL:
            return Outcome("fixes-hazard", f"In the original, autograd's gradient disagrees with finite differences "
                           f"of the same forward (relative {d_old:.1e} along a random direction, fp64, eval mode): a "
                           f"write autograd cannot see; in the rewrite they agree ({d_new:.1e}).", name)
        return Outcome("changes-behaviour", f"autograd and finite differences agree in the original ({d_old:.1e}) "
                       f"as in the rewrite ({d_new:.1e}).", name)
    return Outcome("changes-behaviour", "finite differences could not be measured on the unit.", None)


def check_reference(req: VerifyRequest) -> Outcome:
    """`reference`: the rewrite must equal a third version the rule supplies (the original without
    the hazard, e.g. without the in-place op on a logging alias). Equal to the original as well:
    equivalent; equal to the reference only: fixes-hazard when finite differences show the original's
    write autograd cannot see (`check_fd_probe`), else changes-behaviour."""
    contract = dict(req.contract)
    plain = _run(replace(req, contract={"kind": "equal"}))
    if plain.verdict in ("equivalent", "fixes-crash"):
        return plain
    ref_src = contract.get("reference")
    if not ref_src:
        return plain
    vs_ref = _run(replace(req, original=ref_src, contract={"kind": "equal", "ignore_attributes": True}))
    why = contract.get("why") or "the hazard"
    if vs_ref.verdict in ("equivalent", "fixes-crash"):
        detail = (f"differs from the original, and equals the original without {why}: "
                  + _sentence(vs_ref.detail).rstrip(".") + f" (original vs rewrite: {plain.detail.rstrip('.')})")
        probe = _run(replace(req, contract={"kind": "fd-probe"}))
        if probe.verdict == "fixes-hazard":
            return Outcome("fixes-hazard", _sentence(detail) + " " + probe.detail, vs_ref.unit or plain.unit)
        return Outcome("changes-behaviour", _sentence(detail) + " No hazard shown: " + probe.detail,
                       vs_ref.unit or plain.unit)
    if vs_ref.verdict == "untestable":
        return vs_ref
    return Outcome("failed", f"differs from the original without {why}: {vs_ref.detail}", vs_ref.unit or plain.unit)


def run_request(data: dict) -> dict:
    saved_dtype = torch.get_default_dtype()
    saved_path = list(sys.path)
    try:
        req = VerifyRequest.from_json(data)
        if req.project_root and req.project_root not in sys.path:  # the sandbox put the project's roots first
            sys.path.insert(0, req.project_root)
        here = os.path.dirname(os.path.abspath(req.path)) if req.path and not req.path.startswith("<") else ""
        if here and os.path.isdir(here) and here not in sys.path:
            sys.path.insert(1 if req.project_root else 0, here)  # sibling modules of the checked file
        torch.set_default_dtype(torch.float64)
        out = _run(req)
    except Untestable as u:
        out = Outcome("untestable", str(u), None)
    except Exception as e:  # noqa: BLE001
        if os.environ.get("GRADFIX_VERIFY_DEBUG") == "1":  # the worker's stderr is the terminal then
            import traceback

            traceback.print_exc()
        out = Outcome("untestable", f"verifier error: {fmt_exc(e)}", None)
    finally:
        torch.set_default_dtype(saved_dtype)
        sys.path[:] = saved_path
    return {"verdict": out.verdict, "detail": out.detail, "unit": out.unit}

