"""`gradfix lsp`: verification of fixes in the background (one Verifier, one daemon thread)."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gradfix.cli.lsp_protocol import VERDICT_WORDS

log = logging.getLogger("gradfix.lsp")


# -- verification in the background ------------------------------------------------------------
@dataclass
class _VerifyJob:
    uri: str
    version: int | None
    rule: str
    line: int
    request: Any


class VerifyManager:
    """One Verifier for the server's lifetime, driven by one daemon thread.

    Jobs for a document version that is no longer current are dropped before they run.
    A verifier that raises or does not answer in time is discarded and replaced; the
    job gets an `untestable` verdict that says so.
    """

    def __init__(self, timeout_s: float, is_current: Callable[[str, int | None], bool],
                 on_verdict: Callable[[str, int | None], None]):
        self.timeout_s = timeout_s
        self.is_current = is_current
        self.on_verdict = on_verdict
        self.verdicts: dict[tuple, tuple[str, str]] = {}
        self.pending: set[tuple] = set()
        self._jobs: deque[_VerifyJob] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._verifier = None
        self.unavailable: str | None = None
        # the verifier enforces each check's budget itself; this only catches a verifier that hangs
        # (None: the worker's start-up grace plus the check's wall-clock backstop, at the load of the moment)
        self.hang_guard_s: float | None = None
        self._thread = threading.Thread(target=self._run, name="gradfix-verify", daemon=True)
        self._thread.start()

    @staticmethod
    def import_error() -> str | None:
        try:
            from gradfix.verify import Verifier, VerifyRequest  # noqa: F401
        except Exception as exc:  # a missing or broken package
            return f"{type(exc).__name__}: {exc}"
        return None

    def get(self, uri: str, version: int | None, rule: str, line: int) -> tuple[str, str] | None:
        return self.verdicts.get((uri, version, rule, line))

    def known(self, uri: str, version: int | None) -> dict[tuple[str, int], tuple[str, str]]:
        return {(k[2], k[3]): v for k, v in list(self.verdicts.items()) if k[0] == uri and k[1] == version}

    def submit(self, jobs: list[_VerifyJob]) -> None:
        with self._cv:
            for job in jobs:
                key = (job.uri, job.version, job.rule, job.line)
                if key in self.verdicts or key in self.pending:
                    continue
                self.pending.add(key)
                self._jobs.append(job)
            self._cv.notify()

    def forget(self, uri: str, keep_version: int | None = None) -> None:
        with self._cv:
            for key in [k for k in self.verdicts if k[0] == uri and k[1] != keep_version]:
                del self.verdicts[key]

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._jobs.clear()
            self._cv.notify()
        v, self._verifier = self._verifier, None
        if v is not None:
            _close_quietly(v)

    # -- the thread
    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._jobs and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            key = (job.uri, job.version, job.rule, job.line)
            try:
                if not self.is_current(job.uri, job.version):
                    continue
                verdict, detail = self._verify(job)
                self.verdicts[key] = (verdict, detail)
                self.on_verdict(job.uri, job.version)
            except Exception:  # never let the thread die
                log.exception("verification of %s:%s %s failed", job.uri, job.line, job.rule)
            finally:
                with self._cv:
                    self.pending.discard(key)

    def _verify(self, job: _VerifyJob) -> tuple[str, str]:
        if self.unavailable:
            return "untestable", f"verifier unavailable: {self.unavailable}"
        if self._verifier is None:
            try:
                from gradfix.verify import Verifier

                self._verifier = Verifier(jobs=1, timeout_s=self.timeout_s)
            except Exception as exc:
                self.unavailable = f"{type(exc).__name__}: {exc}"
                return "untestable", f"verifier unavailable: {self.unavailable}"
        verifier = self._verifier
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["result"] = verifier.verify_many([job.request])
            except BaseException as exc:  # noqa: BLE001 - reported as a verdict
                box["error"] = exc

        worker = threading.Thread(target=call, name="gradfix-verify-call", daemon=True)
        worker.start()
        worker.join(self.hang_guard_s if self.hang_guard_s is not None else _hang_guard(self.timeout_s))
        if worker.is_alive() or "error" in box or not box.get("result"):
            self._verifier = None
            threading.Thread(target=_close_quietly, args=(verifier,), daemon=True).start()
            if worker.is_alive():
                return "untestable", "the verifier did not answer; it was restarted"
            err = box.get("error")
            return "untestable", f"the verifier crashed ({type(err).__name__}: {err}); it was restarted"
        res = box["result"][0]
        verdict = str(getattr(res, "verdict", "untestable"))
        if verdict not in VERDICT_WORDS:
            verdict = "untestable"
        return verdict, str(getattr(res, "detail", ""))


def _hang_guard(timeout_s: float) -> float:
    from gradfix.verify import budget, verifier as v

    return budget.wall_backstop(timeout_s) + (v.STARTUP_GRACE_S + v.ANSWER_GRACE_S) * budget.load_factor() + 60.0


def _close_quietly(verifier) -> None:
    try:
        verifier.close()
    except Exception:
        pass
