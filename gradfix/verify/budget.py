"""The time budget of one check: CPU seconds, with a wall-clock backstop (stdlib only).

A check's budget (`--timeout`, or `--cpu-limit` when given) is the CPU time of the check's own
process, enforced with RLIMIT_CPU in the forked child: on a loaded machine a check gets a
fraction of a core, and a wall-clock limit would turn starvation into "timed out" (87 s of wall
time for 5 s of CPU at load 30 on 2 cores). Wall time is only a backstop, for a check that
waits without computing (a sleep, a read, a lock, a worker process of its own): a multiple of
the budget, scaled by how overloaded the machine is when the check starts.
"""

from __future__ import annotations

import math
import os

WALL_FACTOR = 5.0  # the backstop is this many times the CPU budget...
WALL_MIN_S = 60.0  # ...and at least this many seconds, before scaling by the load


def load_factor() -> float:
    """How many runnable processes share each core (1.0 when the machine is not overloaded)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    return max(1.0, load / float(os.cpu_count() or 1))


def cpu_seconds(budget_s: float) -> int:
    """RLIMIT_CPU takes whole seconds: the budget rounded up, at least 1."""
    return max(1, int(math.ceil(budget_s - 1e-9)))


def wall_backstop(budget_s: float) -> float:
    """Wall-clock seconds after which a check is killed even if it is under its CPU budget."""
    return max(WALL_MIN_S, WALL_FACTOR * float(budget_s)) * load_factor()


def child_cpu_seconds(rusage) -> float:
    """User plus system CPU time from an os.wait4 rusage."""
    return float(rusage.ru_utime + rusage.ru_stime)
