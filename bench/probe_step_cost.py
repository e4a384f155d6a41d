"""The probe's fixed cost per optimizer step in microseconds, on steady-state loops of tiny models.

Two models (a 2-parameter Linear(4, 1) and a 3-layer MLP) with SGD and Adam run 300 steps in a timed loop
(thread CPU time, torch on one thread), plain and then under a `Probe()` without a step limit, three rounds;
the best of each side is compared. Unlike bench_probe.py's 5-step runs of the test scripts, thousands of steps
are timed, so a shared machine's noise moves these figures less.

    .venv/bin/python bench/probe_step_cost.py
"""

from __future__ import annotations

import time
import timeit

import torch
import torch.nn as nn

from gradfix.probe.session import Probe


def _model(kind: str):
    if kind == "tiny":
        return nn.Linear(4, 1), torch.randn(8, 4)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)), torch.randn(16, 32)


def main() -> None:
    torch.set_num_threads(1)
    for kind in ("tiny", "mlp"):
        for name in ("SGD", "Adam"):
            model, x = _model(kind)
            opt = getattr(torch.optim, name)(model.parameters(), lr=0.01)

            def step():
                opt.zero_grad()
                model(x).pow(2).mean().backward()
                opt.step()

            def best() -> float:
                return min(timeit.Timer(step, timer=time.thread_time).repeat(number=300, repeat=5)) / 300

            plain, probed = [], []
            for _ in range(3):
                plain.append(best())
                p = Probe(None)
                p.start()
                try:
                    probed.append(best())
                finally:
                    p.stop()
            a, b = min(plain), min(probed)
            print(f"{kind:5s} {name:5s} plain {a * 1e6:7.1f} us  probed {b * 1e6:7.1f} us  +{(b - a) * 1e6:6.1f} us/step  "
                  f"ratio {b / a:.2f}", flush=True)


if __name__ == "__main__":
    main()
