"""The engine-side Verifier: starts worker processes and farms requests out to them.

This module must not import torch (gradfix scanning never imports torch); torch lives in
the worker processes (`python -m gradfix.verify.worker`), which talk JSON lines over pipes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections import deque

from . import budget
from .api import VerifyRequest, VerifyResult
from .environment import Containment, Interpreter, make_shim, new_scratch, worker_command, worker_env

STARTUP_GRACE_S = 180.0  # importing torch cold can take a while (scaled by the machine's load)
ANSWER_GRACE_S = 30.0  # on top of the check's wall-clock backstop, for the worker's own overhead


class _Worker:
    def __init__(self, python: str, env: dict, command: list[str], scratch: str, number: int) -> None:
        debug = os.environ.get("GRADFIX_VERIFY_DEBUG") == "1"
        self.python = python
        self.err_path = os.path.join(scratch, f"worker-{number}.err")
        err = None if debug else open(self.err_path, "wb")
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=scratch,
                close_fds=True,
            )
        finally:
            if err is not None:
                err.close()
        self.fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.buf = b""
        self.ready = False  # hello received
        self.hello: dict = {}
        self.warm = False  # the deferred warm-up is done
        self.started = time.monotonic()
        self.job: tuple[int, float] | None = None  # (request index, deadline)

    def last_error_line(self) -> str:
        """The last line the worker wrote on stderr (why it could not start)."""
        try:
            with open(self.err_path, "rb") as f:
                lines = [ln.strip() for ln in f.read()[-4000:].decode(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return lines[-1][:300] if lines else ""

    def send(self, line: str) -> bool:
        try:
            self.proc.stdin.write((line + "\n").encode())  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def read_lines(self) -> list[dict] | None:
        """Read what is available; None on EOF (the worker died)."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            return None
        self.buf += chunk
        out = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def describe_death(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return "stopped answering"
        if code < 0:
            return f"was killed by signal {-code}"
        last = self.last_error_line()
        return f"exited with status {code}" + (f" ({last})" if last else "")

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        self._reap()

    def close(self, wait_s: float = 5.0) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reap()

    def _reap(self) -> None:
        try:
            self.proc.wait(timeout=5)
        except Exception:
            pass
        for f in (self.proc.stdout, self.proc.stdin):
            try:
                f.close()  # type: ignore[union-attr]
            except Exception:
                pass


class Verifier:
    """Checks rewrites by running both versions in persistent worker processes.

    with Verifier(jobs=2) as v:
        results = v.verify_many(requests)   # same order as requests
    """

    def __init__(self, jobs: int = 1, timeout_s: float = 20.0, python: Interpreter | str | None = None,
                 containment: Containment | None = None) -> None:
        self.jobs = max(1, int(jobs))
        self.timeout_s = float(timeout_s)
        if python is None:
            python = Interpreter(sys.executable, "gradfix's own interpreter")
        elif isinstance(python, str):
            python = Interpreter(os.path.abspath(python), "given")
        self.python: Interpreter = python
        self.containment = containment or Containment()
        self._workers: list[_Worker] = []
        self._scratch: str | None = None
        self._spawned = 0
        self.info: dict = {}  # the first worker's hello: python, torch, network
        self.last_stats: dict = {}

    # -- lifecycle
    def __enter__(self) -> "Verifier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        workers, self._workers = self._workers, []
        for w in workers:
            w.close()
        scratch, self._scratch = self._scratch, None
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)

    def __del__(self) -> None:  # best effort; close() is the real API
        try:
            self.close()
        except Exception:
            pass

    def _new_worker(self) -> _Worker:
        if self._scratch is None or not os.path.isdir(self._scratch):
            self._scratch = new_scratch()
        foreign = not self.python.is_own
        front, back = make_shim(self._scratch, foreign)
        config = {**self.containment.to_json(), "cwd": os.getcwd(), "scratch": self._scratch}
        env = worker_env(self._scratch, config)
        self._spawned += 1
        return _Worker(self.python.path, env, worker_command(self.python.path, front, back), self._scratch,
                       self._spawned)

    def _ensure_workers(self, n: int) -> None:
        while len(self._workers) < n:
            self._workers.append(self._new_worker())

    def _hello(self, w: _Worker, msg: dict) -> None:
        w.ready = True
        w.hello = msg.get("hello") or {}
        if not self.info:
            self.info = dict(w.hello)

    def describe(self) -> str:
        """Where the checks ran, for the verdict detail."""
        net = self.info.get("network") or ""
        note = f"; network {net}" if net.startswith("not blocked") else ""
        return f"ran with {self.python.describe()}{note}"

    def _annotate(self, res: VerifyResult) -> VerifyResult:
        detail = res.detail.rstrip()
        if detail and not detail.endswith("."):
            detail += "."
        return VerifyResult(res.verdict, f"{detail} ({self.describe()})".lstrip(), res.unit)

    def start(self, wait: bool = True, warm: bool = False) -> None:
        """Start the workers now (optional: verify_many starts them lazily) and wait until ready;
        with warm=True also until each has finished its deferred warm-up (for steady-state timings)."""
        self._ensure_workers(self.jobs)
        if not wait:
            return
        deadline = time.monotonic() + STARTUP_GRACE_S * budget.load_factor()
        for w in list(self._workers):
            while (not w.ready or (warm and not w.warm)) and time.monotonic() < deadline:
                ready, _, _ = select.select([w.fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                lines = w.read_lines()
                if lines is None:
                    break  # verify_many notices the dead worker and restarts it
                for m in lines:
                    if "hello" in m:
                        self._hello(w, m)
                    w.warm = w.warm or "warm" in m

    # -- work
    def verify_many(self, requests: list[VerifyRequest]) -> list[VerifyResult]:
        """Check every request; results come back in the same order. Not thread-safe."""
        n = len(requests)
        results: list[VerifyResult | None] = [None] * n
        if not n:
            return []
        self._ensure_workers(max(len(self._workers), min(self.jobs, n)))
        pending = deque(range(n))
        ms: list[float] = []
        start_failures = 0

        def fail_worker(w: _Worker, why: str | None) -> None:
            nonlocal start_failures
            reason = why or w.describe_death()
            w.kill()
            if w.job is not None:
                results[w.job[0]] = VerifyResult(
                    "untestable", f"the verifier worker {reason} while checking this change; it was restarted", None
                )
                w.job = None
            elif not w.ready:
                start_failures += 1
            idx = self._workers.index(w)
            if start_failures >= 2:
                # Workers cannot start (e.g. the interpreter cannot import gradfix): give up on the rest.
                del self._workers[idx]
                if not self._workers:
                    while pending:
                        results[pending.popleft()] = VerifyResult(
                            "untestable", f"the verifier worker could not be started with "
                            f"{self.python.describe()}: it {reason}", None
                        )
                return
            self._workers[idx] = self._new_worker()

        while pending or any(w.job is not None for w in self._workers):
            for w in list(self._workers):
                if w.ready and w.job is None and pending:
                    i = pending.popleft()
                    try:
                        msg = json.dumps({"id": i, "req": requests[i].to_json(), "timeout": self.timeout_s})
                    except (TypeError, ValueError) as e:
                        results[i] = VerifyResult("untestable", f"the request is not JSON-serialisable: {e}", None)
                        continue
                    if w.send(msg):
                        # until the worker says it started the check (it may be finishing a warm-up step), the
                        # start-up grace; then the check's own wall-clock backstop (budget.py)
                        w.job = (i, time.monotonic() + STARTUP_GRACE_S * budget.load_factor())
                    else:
                        w.job = (i, 0.0)
                        fail_worker(w, "stopped reading requests")
            waiting = [w for w in self._workers if not w.ready or w.job is not None]
            if not waiting:
                if pending and not self._workers:
                    break
                continue
            now = time.monotonic()
            grace = STARTUP_GRACE_S * budget.load_factor()
            deadlines = [w.job[1] if w.job is not None else w.started + grace for w in waiting]
            ready, _, _ = select.select([w.fd for w in waiting], [], [], max(0.0, min(deadlines) - now))
            for w, deadline in zip(waiting, deadlines):
                if w not in self._workers:
                    continue
                if w.fd in ready:
                    lines = w.read_lines()
                    if lines is None:
                        fail_worker(w, None)
                        continue
                    for m in lines:
                        if "hello" in m:
                            self._hello(w, m)
                        elif "warm" in m:
                            w.warm = True
                        elif w.job is not None and m.get("id") == w.job[0] and "started" in m:
                            backstop = m["started"] if isinstance(m["started"], (int, float)) else self.timeout_s
                            w.job = (w.job[0], time.monotonic() + float(backstop) + ANSWER_GRACE_S)
                        elif w.job is not None and m.get("id") == w.job[0]:
                            results[w.job[0]] = self._annotate(VerifyResult.from_json(m.get("result") or {}))
                            if isinstance(m.get("ms"), (int, float)):
                                ms.append(float(m["ms"]))
                            w.job = None
                elif time.monotonic() > deadline:
                    fail_worker(w, "did not answer in time" if w.job is not None else
                                f"did not start within {grace:.0f} s")
        self.last_stats = {"checks": len(ms), "worker_ms": ms}
        return [r if r is not None else VerifyResult("untestable", "no result (internal error)", None) for r in results]
