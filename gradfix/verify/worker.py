"""Persistent verification worker: `python -m gradfix.verify.worker`.

Protocol (JSON lines): the parent writes one request per line on our stdin,
`{"id": N, "req": {...VerifyRequest...}, "timeout": seconds}`, and we answer one line per
request, `{"id": N, "result": {...VerifyResult...}, "ms": float}`. The first line we write is
`{"hello": {...}}` once torch is imported (or found missing), and `{"warm": true}` once the
deferred part of the warm-up is done (between requests).

torch is imported once; each request runs in a forked child whose stdin/stdout/stderr point
at /dev/null, so user code that prints, reads stdin, hangs, crashes or calls os._exit cannot
touch the protocol channel. The child writes its result to a pipe; we wait on that pipe
with select() against a deadline and SIGKILL the child's process group on timeout.

Containment (sandbox.py): the worker moves into its own network namespace before importing
torch where the platform allows it; each child works in a scratch folder removed after the
check, under memory, CPU and file-size limits, with the project's modules loaded filtered and
missing packages stubbed. The engine starts us through a folder of links (environment.py), so
the interpreter may be the project's own, without gradfix installed in it.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

if __package__ in (None, ""):  # started by path: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from gradfix.verify import budget, sandbox

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("MKL_NUM_THREADS", "1")

NO_TORCH = ("torch cannot be imported in {python} ({error}); install torch there (see README), or choose "
            "another interpreter with --python")


def _set_pdeathsig() -> None:
    """Linux: the child dies with the worker (so a hung check never outlives it)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"was killed by signal {name}"
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)}"
    return f"ended with status {status}"


def _fmt_timeout(t: float) -> str:
    return f"{t:g}"


_ZOMBIES: list[int] = []
_CLOSE_IN_CHILD: list[int] = []  # the protocol channel: never visible to user code


def reap(block: bool = False) -> None:
    for pid in list(_ZOMBIES):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _ZOMBIES.remove(pid)


CONFIG: dict = {}  # sandbox settings from the engine (GRADFIX_VERIFY_CONFIG)


_LIMITS: dict = {}  # the limits of the check in flight (the CPU budget is its timeout unless --cpu-limit)


def _contain() -> None:
    """In the child: the limits apply from here on."""
    sandbox.set_limits(_LIMITS.get("memory_mb"), _LIMITS.get("cpu_s"), _LIMITS.get("file_mb"))


def run_forked(run, data: dict, timeout: float, started=None) -> dict:
    """Run `run(data)` in a forked child working in a scratch folder that is removed afterwards
    (anything left behind by a process that outlived the check goes with the worker's own
    scratch folder, which the engine removes).

    `timeout` is the check's CPU budget (`--cpu-limit` overrides it), enforced in the child with
    RLIMIT_CPU; wall time is only a backstop (budget.wall_backstop). `started(backstop)` is
    called right before the fork, so that the engine counts the check from there."""
    reap()
    _LIMITS.clear()
    _LIMITS.update(CONFIG)
    _LIMITS["cpu_s"] = CONFIG.get("cpu_s") or timeout
    backstop = CONFIG.get("wall_s") or budget.wall_backstop(_LIMITS["cpu_s"])
    scratch = tempfile.mkdtemp(prefix="check-", dir=CONFIG.get("scratch") or None)
    try:
        if started is not None:
            started(backstop)
        return _run_forked(run, data, backstop, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_forked(run, data: dict, backstop: float, scratch: str) -> dict:
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # ---- child
        code = 0
        try:
            os.close(r)
            for fd in _CLOSE_IN_CHILD:
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                os.setpgid(0, 0)
            except OSError:
                pass
            _set_pdeathsig()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(scratch)
            _contain()
            gc.disable()  # short-lived process: skip collections (and copy-on-write faults)
            try:
                res = run(data)
            except BaseException as e:  # noqa: BLE001 - SystemExit from user code included
                res = {
                    "verdict": "untestable",
                    "detail": f"the check was aborted: user code raised {type(e).__name__}: {e}"[:300],
                    "unit": None,
                }
            payload = (json.dumps(res) + "\n").encode()
            view = memoryview(payload)
            while view:
                n = os.write(w, view)
                view = view[n:]
        except BaseException:  # noqa: BLE001
            code = 70
        finally:
            os._exit(code)
    # ---- worker
    os.close(w)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    t_start = time.monotonic()
    deadline = t_start + backstop
    chunks: list[bytes] = []
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                timed_out = True
                break
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
    finally:
        os.close(r)
    if timed_out:
        for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass
        _, _status, usage = os.wait4(pid, 0)
        return {
            "verdict": "untestable",
            "detail": f"timed out: {time.monotonic() - t_start:.0f} s of wall-clock time, the backstop, with "
            f"{budget.child_cpu_seconds(usage):.1f} s of its {_fmt_timeout(_LIMITS['cpu_s'])} s CPU budget used (the "
            f"check waits without computing: a sleep, input, a lock, a process of its own; the check was killed)",
            "unit": None,
        }
    data_out = b"".join(chunks).strip()
    if data_out:
        try:
            res = json.loads(data_out.decode())
        except ValueError:
            res = None
        if isinstance(res, dict) and "verdict" in res:
            # The child has reported and only has to exit. Tearing down a process of torch's
            # size takes milliseconds, so reap it later instead of waiting here; killing the
            # group also removes any process the check spawned.
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _ZOMBIES.append(pid)
            return res
    _, status, usage = os.wait4(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    limit = (sandbox.describe_signal(os.WTERMSIG(status), _LIMITS, budget.child_cpu_seconds(usage))
             if os.WIFSIGNALED(status) else None)
    if limit:
        return {"verdict": "untestable", "detail": limit, "unit": None}
    return {
        "verdict": "untestable",
        "detail": f"the check process {_describe_status(status)} before reporting a result (user code crashed or "
        f"called exit)",
        "unit": None,
    }


WARMUP_SRC = '''
import torch, torch.nn as nn
class _W(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                               nn.Flatten())
        self.fc = nn.Linear(4, 2)
        self.d = nn.Dropout(0.1)
    def forward(self, x):
        f = self.c(x)
        f = f / (f.norm(dim=1, keepdim=True) + 1e-6)
        return self.fc(self.d(f)).sigmoid()
'''


def avoid_dynamo_import() -> None:
    """Keep torch._dynamo (2-4 s to import, more than the rest of the start-up) out of the worker.

    torch wraps some functions in a lazy `_disable_dynamo` (every TorchDispatchMode's handler,
    hence `allow_mutation_on_saved_tensors()`, the fixes-crash rerun; `Optimizer.zero_grad`,
    `add_param_group`, `state_dict`; `mse_loss`, `l1_loss`; `checkpoint`) whose first call
    imports torch._dynamo only to mark the function "not to be traced". Until dynamo is loaded
    nothing is traced, so each such function gets a stand-in that calls it directly while
    torch._dynamo is absent and torch's own disabled version once something has imported it
    (user code calling torch.compile): the behaviour is torch's, without the import."""
    if "torch._dynamo" in sys.modules:
        return
    try:
        import types

        import torch._compile as tc

        code = tc._disable_dynamo(lambda: None).__code__
        if not {"fn", "recursive"} <= set(code.co_freevars):
            return  # another torch: the import just happens
        function = types.FunctionType
        seen: set[int] = set()
        for name, mod in list(sys.modules.items()):
            if not name.startswith("torch") or type(mod) is not types.ModuleType:
                continue
            for v in list(vars(mod).values()):
                if type(v) is function:
                    _lazy_disable(v, code)
                elif issubclass(type(v), type) and id(v) not in seen:
                    seen.add(id(v))
                    for o in list(vars(v).values()):
                        if type(o) is function:
                            _lazy_disable(o, code)
    except Exception:  # noqa: BLE001 - another torch version: the import just happens
        pass


def _lazy_disable(inner, code) -> None:
    if inner.__code__ is not code:
        return
    cells = dict(zip(code.co_freevars, inner.__closure__ or ()))
    fn, recursive = cells["fn"].cell_contents, cells["recursive"].cell_contents
    if getattr(fn, "__dynamo_disable", None) is not None:
        return
    real: list = []

    def call(*args, **kwargs):
        if "torch._dynamo" not in sys.modules:
            return fn(*args, **kwargs)
        if not real:
            import torch._dynamo

            real.append(torch._dynamo.disable(fn, recursive, wrapping=False))
        return real[0](*args, **kwargs)

    fn.__dynamo_disable = call


def warm_up_steps(run):
    """Representative checks run in this process so that forked children inherit warm state, one
    per step. The module checks (about 0.4 s once torch._dynamo is kept out) run before the hello;
    the steps after DEFERRED (a train-step check, which imports torch._dynamo, and libcst for the
    loop checks: 3-5 s together) run when no request is waiting, so that they do not delay the
    first verdict."""
    new = WARMUP_SRC.replace("f = f / (", "f /= (").replace(").sigmoid()", ").sigmoid() * 1.0")
    cases = [
        {"kind": "equal"},
        {"kind": "scale", "factor": 2.0, "expr_old": "loss / 2", "expr_new": "loss", "opaque": ["loss"]},
    ]
    cases.append({"kind": "gains-grad", "setup": "m = _W()", "call": "(m.fc.weight ** 2).sum()", "model": "m"})
    step = "opt.zero_grad()\nloss = __gf_loss(m(__gf_input())) + (m.fc.weight ** 2).sum()\nloss.backward()\nopt.step()\n"
    # optimizer.step() imports torch._dynamo unconditionally (2-4 s): the train-step checks come after the hello
    cases.append(DEFERRED)
    cases.append(
        {"kind": "clamp-moved", "setup": "m = _W()\nopt = torch.optim.AdamW(m.parameters(), lr=1e-3)", "step_old": step,
         "step_new": step + "with torch.no_grad():\n    m.fc.weight.clamp_(-1.0, 1.0)\n", "param": "m.fc.weight",
         "bounds": [-1.0, 1.0], "lr_hint": None, "model": "m"}
    )
    for contract in cases:
        if contract is DEFERRED:
            yield DEFERRED
            continue
        for a, b in ((new, WARMUP_SRC), (WARMUP_SRC, WARMUP_SRC + "\nx = torch.zeros(1, device='cuda')\n")):
            try:
                run({"path": "<warmup>", "original": a, "rewritten": b, "rule": "", "line": 1, "contract": contract})
            except Exception:
                pass
            yield
    try:
        from gradfix.verify.checks import extra_checks

        extra_checks()  # the other contract kinds' modules (libcst for the loop checks)
    except Exception:  # noqa: BLE001
        pass
    yield


DEFERRED = object()


def warm_up(run) -> None:
    for _ in warm_up_steps(run):
        pass


def _freeze() -> None:
    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()


def main() -> int:
    # Ctrl-C in the terminal reaches the whole foreground process group: leave it to the engine,
    # which closes our stdin (or dies, which also closes it) when it wants us gone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol channel is a private dup of fd 1; fd 1 itself now points at stderr so that
    # stray prints (ours, torch's, a library's) can never corrupt the protocol.
    proto = os.fdopen(os.dup(1), "wb", buffering=0)
    _CLOSE_IN_CHILD.append(proto.fileno())
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(obj: dict) -> None:
        proto.write((json.dumps(obj) + "\n").encode())

    CONFIG.update(sandbox.config())
    if "" in sys.path:
        sys.path.remove("")  # the scratch folder we were started in
    network = "not blocked (allowed by the caller)" if CONFIG.get("network") else sandbox.isolate_network()
    try:
        import torch

        torch.set_num_threads(1)
        avoid_dynamo_import()
        from gradfix.verify.checks import run_request

        run = sandbox.contained(run_request, CONFIG)
        hello = {"torch": torch.__version__}
    except ImportError as e:
        run = run_request = None
        hello = {"torch": None, "error": str(e)}
    hello.update({"python": sys.executable, "version": sys.version.split()[0], "network": network})
    steps = None
    if run_request is not None and os.environ.get("GRADFIX_VERIFY_NO_WARMUP") != "1":
        steps = warm_up_steps(run_request)
        while next(steps, DEFERRED) is not DEFERRED:
            pass
    _freeze()
    send({"hello": hello})

    stdin = sys.stdin.buffer
    while True:
        while steps is not None and not select.select([stdin], [], [], 0)[0]:
            if next(steps, StopIteration) is StopIteration:
                steps = None
                send({"warm": True})
            _freeze()
        line = stdin.readline()
        if not line:
            reap(block=True)
            return 0
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        t0 = time.perf_counter()
        if run is None:
            res = {"verdict": "untestable", "detail": NO_TORCH.format(python=sys.executable,
                                                                      error=hello.get("error")), "unit": None}
        else:
            try:
                res = run_forked(run, msg.get("req") or {}, float(msg.get("timeout") or 20.0),
                                 lambda backstop: send({"id": msg.get("id"), "started": backstop}))
            except Exception as e:  # noqa: BLE001
                res = {"verdict": "untestable", "detail": f"verifier worker error: {type(e).__name__}: {e}", "unit": None}
        send({"id": msg.get("id"), "result": res, "ms": (time.perf_counter() - t0) * 1000.0})


if __name__ == "__main__":
    sys.exit(main())
