"""Run a training script in-process under the probe (like `coverage run`) and collect its report."""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
import traceback

from gradfix.probe.frames import is_user_file
from gradfix.probe.report import Report
from gradfix.probe.session import INPLACE_ERROR, Probe, StopProbe


class ScriptExit(Exception):
    """The script called sys.exit with a non-zero status."""


def _run(script: str, args: list[str], probe: Probe) -> BaseException | None:
    """Run `script` as __main__ with sys.argv set; the probe's stop is the normal end. Returns the exception the
    script ended with, or None."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    probe.start()
    try:
        runpy.run_path(script, run_name="__main__")
    except StopProbe:
        return None
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return ScriptExit(f"the script exited with status {exc.code}")
        return None
    except Exception as exc:  # noqa: BLE001 - any failure of the script is reported, not raised
        return exc
    finally:
        probe.stop()
        sys.argv, sys.path[:] = saved_argv, saved_path
    return None


def _user_traceback(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and not is_user_file(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def run_script(script: str, args: list[str] | None = None, steps: int = 5) -> Report:
    """Probe `script` for `steps` optimizer steps (each optimizer), then diagnose. A backward that fails with an
    in-place error is repeated once, in a second run of the script with its output discarded, under anomaly
    detection to find the lines."""
    from gradfix.probe.diagnose import diagnose
    from gradfix.probe.inplace import inplace_finding

    args = list(args or [])
    probe = Probe(steps)
    exc = _run(script, args, probe)
    findings, layers = diagnose(probe)
    notes: list[str] = []
    error = None
    if exc is not None:
        if probe.inplace_error is not None and isinstance(exc, RuntimeError) and INPLACE_ERROR in str(exc):
            replay = Probe(None, replay_step=probe.inplace_error["step"])
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                _run(script, args, replay)
            findings.insert(0, inplace_finding(probe.inplace_error, replay))
            notes.append(f"backward() failed at step {probe.inplace_error['step'] + 1}; the script ran a second time "
                         "(output discarded) to repeat that step under anomaly detection")
        else:
            error = _user_traceback(exc)
    if not probe.opts and exc is None:
        notes.append("no optimizer.step() ran: nothing was probed")
    steps_seen = max((r.steps for r in probe.opts.values()), default=0)
    return Report(findings, layers, steps_seen, error=error, notes=notes)
