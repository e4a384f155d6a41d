"""The engine-side Verifier: starts worker processes and farms requests out to them.

This module must not import torch (gradfix scanning never imports torch); torch lives in
the worker processes (`python -m gradfix.verify.worker`), which talk JSON lines over pipes.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections import deque

from .api import VerifyRequest, VerifyResult

_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STARTUP_GRACE_S = 180.0  # importing torch cold can take a while
ANSWER_GRACE_S = 30.0  # on top of the per-check timeout, for the worker's own overhead


class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = "1"
        env.setdefault("MKL_NUM_THREADS", "1")
        env["PYTHONPATH"] = _PKG_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        debug = os.environ.get("GRADFIX_VERIFY_DEBUG") == "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gradfix.verify.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self.fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.buf = b""
        self.ready = False  # hello received
        self.job: tuple[int, float] | None = None  # (request index, deadline)

    def send(self, obj: dict) -> bool:
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())  # type: ignore[union-attr]
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
        return f"exited with status {code}"

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

    def __init__(self, jobs: int = 1, timeout_s: float = 20.0) -> None:
        self.jobs = max(1, int(jobs))
        self.timeout_s = float(timeout_s)
        self._workers: list[_Worker] = []
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

    def __del__(self) -> None:  # best effort; close() is the real API
        try:
            self.close()
        except Exception:
            pass

    def _ensure_workers(self, n: int) -> None:
        while len(self._workers) < n:
            self._workers.append(_Worker())

    def start(self, wait: bool = True) -> None:
        """Start the workers now (optional: verify_many starts them lazily) and wait until ready."""
        self._ensure_workers(self.jobs)
        if not wait:
            return
        deadline = time.monotonic() + STARTUP_GRACE_S
        for w in list(self._workers):
            while not w.ready and time.monotonic() < deadline:
                ready, _, _ = select.select([w.fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                lines = w.read_lines()
                if lines is None:
                    break
                w.ready = w.ready or any("hello" in m for m in lines)

    # -- work
    def verify_many(self, requests: list[VerifyRequest]) -> list[VerifyResult]:
        results: list[VerifyResult | None] = [None] * len(requests)
        if not requests:
            return []
        self._ensure_workers(min(self.jobs, len(requests)) if not self._workers else len(self._workers))
        pending = deque(range(len(requests)))
        ms: list[float] = []

        def assign(w: _Worker) -> None:
            while pending and w.job is None:
                i = pending.popleft()
                grace = ANSWER_GRACE_S + (0.0 if w.ready else STARTUP_GRACE_S)
                msg = {"id": i, "req": requests[i].to_json(), "timeout": self.timeout_s}
                if w.send(msg):
                    w.job = (i, time.monotonic() + self.timeout_s + grace)
                else:
                    self._replace(w, requests, results, i, "could not be started or stopped reading requests")
                    return

        while pending or any(w.job for w in self._workers):
            for w in list(self._workers):
                if w.job is None and pending:
                    assign(w)
            busy = [w for w in self._workers if w.job is not None]
            if not busy:
                continue
            now = time.monotonic()
            wait = max(0.0, min(w.job[1] for w in busy) - now)  # type: ignore[index]
            ready, _, _ = select.select([w.fd for w in busy], [], [], wait)
            for w in busy:
                if w.fd in ready:
                    lines = w.read_lines()
                    if lines is None:
                        i = w.job[0]  # type: ignore[index]
                        self._replace(w, requests, results, i, None)
                        continue
                    for m in lines:
                        if "hello" in m:
                            w.ready = True
                        elif w.job is not None and m.get("id") == w.job[0]:
                            results[w.job[0]] = VerifyResult.from_json(m.get("result") or {})
                            if isinstance(m.get("ms"), (int, float)):
                                ms.append(float(m["ms"]))
                            w.job = None
                elif w.job is not None and time.monotonic() > w.job[1]:
                    self._replace(w, requests, results, w.job[0], "did not answer in time")
        self.last_stats = {"checks": len(ms), "worker_ms": ms}
        return [r if r is not None else VerifyResult("untestable", "no result (internal error)", None) for r in results]

    def _replace(self, w: _Worker, requests, results, i: int, why: str | None) -> None:
        """A worker died or hung: report its request as untestable and start a fresh worker."""
        reason = why or w.describe_death()
        w.kill()
        idx = self._workers.index(w)
        results[i] = VerifyResult(
            "untestable",
            f"the verifier worker {reason} while checking this change; it was restarted",
            None,
        )
        w.job = None
        self._workers[idx] = _Worker()
