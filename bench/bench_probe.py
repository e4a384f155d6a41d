"""Overhead of `gradfix probe`: time per optimizer step with the probe against a plain run, side by side.

Each script in tests/probe_scripts/ runs in this process under runpy, alternately plain and probed, `--reps`
times. A timing hook (one thread_time() per step, in both runs) gives the CPU time between consecutive steps (CPU
rather than wall time: this machine is shared, and torch runs on one thread here); the
first step (warm-up) is dropped and the median of the rest is the step time. The figure is the ratio
probed/plain of the best (lowest) medians, so that noise from a shared machine counts against neither side; the
median of the per-round ratios (each probed run against the plain run just before it) is printed beside it, with
the probe's cost in microseconds per step (best probed minus best plain). The summary gives the median and worst
ratio, how many scripts are above 2x, and the load average before and after (os.getloadavg, as `uptime` shows).
Steps where the probe localises something (an op tracer or line tracing, one step at most) are included.

    .venv/bin/python bench/bench_probe.py [--reps 5] [--steps 5] [scripts...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import runpy
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from gradfix.probe.runner import run_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "probe_scripts"


class _Stop(BaseException):
    pass


def _step_times(run) -> list[float]:
    stamps: list[float] = []
    handle = register_optimizer_step_post_hook(lambda *a: stamps.append(time.thread_time()))
    try:
        run()
    finally:
        handle.remove()
    return [b - a for a, b in zip(stamps, stamps[1:])]


def plain(script: str, steps: int) -> list[float]:
    count = [0]

    def stop(*_):
        count[0] += 1
        if count[0] >= steps:
            raise _Stop()

    def run():
        h = register_optimizer_step_post_hook(stop)
        saved = sys.argv[:]
        sys.argv = [script]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(script, run_name="__main__")
        except (_Stop, RuntimeError):
            pass
        finally:
            sys.argv = saved
            h.remove()

    return _step_times(run)


def probed(script: str, steps: int) -> list[float]:
    def run():
        with contextlib.redirect_stdout(io.StringIO()):
            run_script(script, [], steps=steps)

    return _step_times(run)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("scripts", nargs="*")
    a = ap.parse_args()
    torch.set_num_threads(1)
    scripts = a.scripts or sorted(str(p) for p in SCRIPTS.glob("*.py"))
    load_before = os.getloadavg()
    rows = []
    for s in scripts:
        best_plain, best_probe = float("inf"), float("inf")
        paired = []
        for _ in range(a.reps):
            tp = plain(s, a.steps)
            tq = probed(s, a.steps)
            if len(tp) >= 2 and len(tq) >= 2:
                mp, mq = statistics.median(tp[1:]), statistics.median(tq[1:])
                best_plain, best_probe = min(best_plain, mp), min(best_probe, mq)
                paired.append(mq / mp)
        if best_plain == float("inf"):
            print(f"{os.path.basename(s):32s} (fewer than 3 steps: backward fails before stepping)")
            continue
        ratio = best_probe / best_plain
        rows.append(ratio)
        print(f"{os.path.basename(s):32s} plain {best_plain * 1e3:7.3f} ms/step  probed {best_probe * 1e3:7.3f} "
              f"ms/step  +{(best_probe - best_plain) * 1e6:6.0f} us  ratio {ratio:4.2f}  (per-round median "
              f"{statistics.median(paired):4.2f})", flush=True)
    load_after = os.getloadavg()
    over = sum(r > 2.0 for r in rows)
    print(f"\n{len(rows)} scripts: median ratio {statistics.median(rows):.2f}, max {max(rows):.2f}, {over} above 2x "
          f"(torch {torch.__version__}, 1 thread; load average {load_before[0]:.1f} before, {load_after[0]:.1f} "
          f"after, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
