"""False alarms of `gradfix probe` on healthy training scripts: every finding on one of them is a false alarm.

Runs each tests/probe_scripts/healthy_*.py (MLP, CNN with batch norm, LSTM, GAN with two optimizers, AMP with a
GradScaler, gradient accumulation, frozen backbones, weight constraints, distillation, a transformer, per-epoch
and per-iteration schedulers, the seeds as fixed) in-process at each --steps value and counts findings.

    .venv/bin/python bench/probe_false_alarms.py [--steps 5 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from gradfix.probe.runner import run_script

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "probe_scripts"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, nargs="+", default=[5, 20])
    a = ap.parse_args()
    healthy = sorted(SCRIPTS.glob("healthy_*.py"))
    for steps in a.steps:
        flagged = 0
        for s in healthy:
            with contextlib.redirect_stdout(io.StringIO()):
                rep = run_script(str(s), [], steps=steps)
            bad = [f"{f.kind}:{f.line}" for f in rep.findings] + (["script failed"] if rep.error else [])
            flagged += bool(bad)
            print(f"steps={steps:<3} {s.name:32s} probed {rep.steps:3d} steps  {', '.join(bad) or 'no finding'}")
        print(f"steps={steps}: {flagged} of {len(healthy)} healthy scripts with a finding "
              f"(false-alarm rate {flagged / len(healthy):.0%})\n")


if __name__ == "__main__":
    main()
