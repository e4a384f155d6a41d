"""Throughput of gradfix.verify, against a naive peer.

    .venv/bin/python bench/bench_verify.py [--checks 40] [--peer-checks 4] [--jobs N]

Measured:
  * gradfix: persistent workers (torch imported once, warmed up), one forked child per check.
    Start-up is timed separately; the figure is checks per second per worker after start-up,
    with one worker, and the total with --jobs workers (default: the CPU count).
  * peer: the naive approach, a fresh `python -c` process per check that imports torch and
    runs the same check code in-process (no fork, no warm-up), run from this same process
    tree on a handful of checks.
  * first verdict: a cold Verifier to its first verdict, next to a bare torch import.
Cases: the first seed's Net (fixes-crash via the cuda->cpu redirect) and an equivalent
rewrite of a small Linear/BatchNorm head, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gradfix.verify import Verifier, VerifyRequest  # noqa: E402

SEED = (REPO / "tests" / "verify_cases" / "seed_net.py.txt").read_text()
SEED_FIXED = SEED.replace("f_log = f.detach() ", "f_log = f.detach().clone() ").replace(
    "f /= (f.norm(dim=1, keepdim=True) + 1e-6)", "f = f / (f.norm(dim=1, keepdim=True) + 1e-6)"
)
HEAD = '''
import torch.nn as nn

class Head(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.fc = nn.Linear(d, 16)
        self.bn = nn.BatchNorm1d(16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        y = self.fc(x)
        y *= 0.5
        return self.out(self.bn(y).relu())
'''


def cases(n: int) -> list[VerifyRequest]:
    seed = VerifyRequest("seed.py", SEED, SEED_FIXED, "GF101", 17, {"kind": "equal"})
    head = VerifyRequest("head.py", HEAD, HEAD.replace("y *= 0.5", "y = y * 0.5"), "GF101", 12, {"kind": "equal"})
    return [seed if i % 2 == 0 else head for i in range(n)]


EXPECTED = {"seed.py": "fixes-crash", "head.py": "equivalent"}

PEER = """
import json, os, sys
os.environ["OMP_NUM_THREADS"] = "1"
import torch
torch.set_num_threads(1)
sys.path.insert(0, {repo!r})
from gradfix.verify.checks import run_request
print(json.dumps(run_request(json.loads(sys.stdin.read()))["verdict"]))
"""


def _cpu_s(pids: list[int]) -> float:
    """CPU seconds used by these processes and their reaped children (Linux /proc)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return float("nan")
    return total + sum(os.times()[:2])  # plus this (parent) process


def run_gradfix(jobs: int, n: int) -> dict:
    reqs = cases(n)
    with Verifier(jobs=jobs, timeout_s=30) as v:
        t0 = time.perf_counter()
        v.start(wait=True, warm=True)  # steady state: the deferred warm-up (torch._dynamo, libcst) is done
        startup = time.perf_counter() - t0
        v.verify_many(reqs[:jobs])  # make sure every worker answered once (not counted)
        pids = [w.proc.pid for w in v._workers]
        c0 = _cpu_s(pids)
        t0 = time.perf_counter()
        res = v.verify_many(reqs)
        wall = time.perf_counter() - t0
        cpu = _cpu_s(pids) - c0
        ms = v.last_stats.get("worker_ms", [])
    bad = [(r.path, x.verdict) for r, x in zip(reqs, res) if x.verdict != EXPECTED[r.path]]
    return {
        "jobs": jobs,
        "startup_s": startup,
        "checks": n,
        "wall_s": wall,
        "checks_per_s": n / wall,
        "checks_per_s_per_worker": n / wall / jobs,
        "median_ms_in_worker": statistics.median(ms) if ms else float("nan"),
        "cpu_s": cpu,
        "checks_per_cpu_s": n / cpu if cpu > 0 else float("nan"),
        "wrong": bad,
    }


def run_first_verdict(rounds: int) -> dict:
    """Seconds from a cold Verifier to its first verdict (worker start, torch import, the check),
    next to a bare `python -c "import torch"` timed just before it (the floor of any worker start)."""
    firsts, imports, cpus = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        imports.append(time.perf_counter() - t0)
        with Verifier(jobs=1, timeout_s=30) as v:
            t0 = time.perf_counter()
            (res,) = v.verify_many(cases(1))
            firsts.append(time.perf_counter() - t0)
            cpus.append(_cpu_s([v._workers[0].proc.pid]) - sum(os.times()[:2]))  # the worker and its children only
        if res.verdict != EXPECTED["seed.py"]:
            return {"wrong": [res.verdict, res.detail]}
    return {"first_s": firsts, "import_s": imports, "cpu_s": cpus, "wrong": []}


def run_peer(n: int) -> dict:
    reqs = cases(n)
    code = PEER.format(repo=str(REPO))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    times, bad = [], []
    for r in reqs:
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", code], input=json.dumps(r.to_json()), capture_output=True, text=True,
                           env=env, timeout=300)
        times.append(time.perf_counter() - t0)
        verdict = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else f"rc={p.returncode}"
        if verdict != EXPECTED[r.path]:
            bad.append((r.path, verdict))
    return {"checks": n, "wall_s": sum(times), "checks_per_s": n / sum(times), "per_check_s": times, "wrong": bad}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checks", type=int, default=40)
    ap.add_argument("--peer-checks", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--first-rounds", type=int, default=3, help="cold starts timed to the first verdict")
    a = ap.parse_args()
    print("command:", " ".join([os.path.relpath(sys.executable, os.getcwd()) if sys.executable.startswith(os.getcwd())
                                else sys.executable] + sys.argv))
    import platform

    print(f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, load average before "
          f"{os.getloadavg()[0]:.2f} (other processes share these CPUs: the wall-clock figures depend on that, the "
          f"per-CPU-second figures much less)")
    first = run_first_verdict(a.first_rounds)
    if first["wrong"]:
        print("first verdict: WRONG", first["wrong"])
    else:
        pairs = ", ".join(f"{f:.2f}/{i:.2f}" for f, i in zip(first["first_s"], first["import_s"]))
        print(f"first verdict of a cold verifier (fixes-crash check of the seed): median "
              f"{statistics.median(first['first_s']):.2f} s; a bare `python -c 'import torch'` just before: median "
              f"{statistics.median(first['import_s']):.2f} s (pairs first/import: {pairs}); CPU of the worker until "
              f"then: median {statistics.median(first['cpu_s']):.2f} s; target: within 3 s on an idle machine")
    one = run_gradfix(1, a.checks)
    print(f"gradfix, 1 worker : start-up {one['startup_s']:.2f} s; {one['checks']} checks in {one['wall_s']:.2f} s = "
          f"{one['checks_per_s']:.1f} checks/s per worker (median {one['median_ms_in_worker']:.1f} ms per check in the "
          f"worker); CPU {one['cpu_s']:.2f} s = {one['checks_per_cpu_s']:.1f} checks per CPU-second"
          f"{'; WRONG: ' + str(one['wrong']) if one['wrong'] else ''}")
    many = None
    if a.jobs > 1:
        many = run_gradfix(a.jobs, a.checks)
        print(f"gradfix, {a.jobs} workers: start-up {many['startup_s']:.2f} s; {many['checks']} checks in "
              f"{many['wall_s']:.2f} s = {many['checks_per_s']:.1f} checks/s total, "
              f"{many['checks_per_s_per_worker']:.1f} per worker; {many['checks_per_cpu_s']:.1f} checks per CPU-second"
              f"{'; WRONG: ' + str(many['wrong']) if many['wrong'] else ''}")
    peer = run_peer(a.peer_checks)
    per = ", ".join(f"{t:.2f}" for t in peer["per_check_s"])
    print(f"peer (fresh `python -c` per check): {peer['checks']} checks in {peer['wall_s']:.2f} s = "
          f"{peer['checks_per_s']:.2f} checks/s (per check: {per} s){'; WRONG: ' + str(peer['wrong']) if peer['wrong'] else ''}")
    print(f"ratio (gradfix 1 worker / peer, one process at a time each): {one['checks_per_s'] / peer['checks_per_s']:.0f}x")
    target = 20.0
    print(f"target >= {target:.0f} checks/s per core after start-up: "
          f"{'met' if one['checks_per_cpu_s'] >= target else 'NOT met'} by CPU time "
          f"({one['checks_per_cpu_s']:.1f} checks per CPU-second, worker + forked children + this process), "
          f"{'met' if one['checks_per_s'] >= target else 'not met'} by wall clock with 1 worker "
          f"({one['checks_per_s']:.1f}/s; load average now {os.getloadavg()[0]:.2f})")
    return 0 if not (one["wrong"] or peer["wrong"] or (many and many["wrong"])) else 1


if __name__ == "__main__":
    sys.exit(main())
