"""What the probe does per optimizer step, counted rather than timed: its Python calls, the ATen ops it issues
(`torch.stack`, `torch._foreach_norm`, `.detach()`, ...; not metadata such as `data_ptr()` nor grad-mode switches)
and its reads of tensor values into Python (`.tolist()`, `.item()`, `float()`), per script, from cProfile's call graph (second run, imports warm).

Counts do not depend on the machine's load, so they show what a change removed even where timings
(bench/bench_probe.py) are noisy. Calls are attributed to the probe when the caller is a function in
gradfix/probe/; torch's own calls below those are not counted (the torch call is).

    .venv/bin/python bench/probe_costs.py [--steps 20] [scripts...]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
from pathlib import Path

import torch

from gradfix.probe.runner import run_script

ROOT = Path(__file__).resolve().parent.parent
PROBE_DIR = str(ROOT / "gradfix" / "probe") + os.sep
SCRIPTS = ROOT / "tests" / "probe_scripts"
_READS = ("'tolist'", "'item'", "'__float__'", "'__bool__'", "'__int__'")
# torch calls that dispatch no ATen op: metadata, grad mode and torch-function switches
_NOT_OPS = ("'data_ptr'", "'untyped_storage'", "'numel'", "'is_floating_point'", "'dim'", "'size'", "'name'",
            "'register_hook'", "_set_grad_enabled", "is_grad_enabled", "DisableTorchFunction", "'remove'",
            "set_detect_anomaly")


def _kind(func: tuple) -> str | None:
    """'op' (an ATen op), 'read' (a tensor read into Python) or None for the torch calls, None for the rest."""
    path, _, name = func
    if path != "~" or not ("torch" in name or "Backward" in name):
        return None
    if any(r in name for r in _READS):
        return "read"
    return None if any(n in name for n in _NOT_OPS) else "op"


def costs(script: str, steps: int) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):
        run_script(script, [], steps=steps)  # imports and caches warm
    prof = cProfile.Profile()
    prof.enable()
    with contextlib.redirect_stdout(io.StringIO()):
        rep = run_script(script, [], steps=steps)
    prof.disable()
    stats = pstats.Stats(prof).stats  # func -> (cc, nc, tt, ct, callers)
    py = ops = reads = 0
    for func, (_, nc, _, _, callers) in stats.items():
        if func[0].startswith(PROBE_DIR):
            py += nc
        from_probe = sum(c[1] for caller, c in callers.items() if caller[0].startswith(PROBE_DIR))
        kind = _kind(func) if from_probe else None
        reads += from_probe if kind == "read" else 0
        ops += from_probe if kind == "op" else 0
    n = max(rep.steps, 1)
    return {"steps": rep.steps, "py": py / n, "ops": ops / n, "reads": reads / n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("scripts", nargs="*")
    a = ap.parse_args()
    torch.set_num_threads(1)
    scripts = a.scripts or sorted(str(p) for p in SCRIPTS.glob("*.py"))
    print(f"{'script':32s} {'steps':>5s} {'probe py calls/step':>20s} {'torch ops/step':>15s} {'reads/step':>11s}")
    for s in scripts:
        c = costs(s, a.steps)
        print(f"{os.path.basename(s):32s} {c['steps']:5d} {c['py']:20.1f} {c['ops']:15.1f} {c['reads']:11.1f}")


if __name__ == "__main__":
    main()
