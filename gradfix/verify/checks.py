"""The checks themselves. Imported only by the worker process (this module imports torch).

`run_request(dict) -> dict` runs one VerifyRequest (as JSON data) and returns a VerifyResult
(as JSON data). It is called in a forked child of the worker, and once in the worker
itself to warm up torch before the first fork.

Outline (see /work/shared/design/verification.md for the measured facts behind it):
- `source.analyze` finds the changed top-level classes/functions/constants; `plan_units`
  turns them into units: changed nn.Module classes, classes that reach a changed function or
  constant, functions with a fixture; module-level code is never executed.
- Each version is exec'd from its stripped AST into its own module (in sys.modules during
  the exec), in fp64 (`set_default_dtype`), under the cuda->cpu redirect when the code
  targets CUDA.
- `module_check`: same seed for both constructions, state copied old->new, input inferred
  from the first Conv/Linear/Embedding/RNN leaf (or a fixture), eval and train runs with a
  fresh non-leaf input clone and a fixed random projection as the test loss; outputs,
  parameter grads, input grads and buffers compared by norm-relative error (1e-9 in fp64).
  An original that breaks backward with an in-place error is rerun under
  `allow_mutation_on_saved_tensors` to get its intended result ("fixes-crash").
- Contracts: equal, scale (module or loss expression with opaque leaves), clamp-moved
  (k-step train-step check from two starts), gains-grad.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import importlib.util
import inspect
import itertools
import functools
import math
import os
import random
import re
import sys
import types
from dataclasses import replace, dataclass, field
from typing import Any, Callable

import torch
import torch.nn as nn

try:  # numpy is optional; seeded only when present
    import numpy as np
except Exception:  # pragma: no cover
    np = None  # type: ignore[assignment]

from . import source as S
from .api import VerifyRequest, verdict_rank

TOL64 = 1e-9
TOL32 = 1e-4
SEED_BUILD = 0
SEED_RUN = 7
SEED_INPUT = 1234
SEED_PROJ = 4321
BATCH = 4
REDIRECT_NOTE = "checked on CPU via cuda->cpu redirect"
FIXTURE_FILE = "gradfix_fixtures.py"


class Untestable(Exception):
    pass


class _RetryFp32(Exception):
    pass


class FailedCheck(Exception):
    """The rewrite is broken in a way that ends the check (e.g. the new module does not load)."""


@dataclass
class Outcome:
    verdict: str
    detail: str
    unit: str | None = None


def fixture_hint(name: str, what: str = "module") -> str:
    return f"define fixture_{name}(mod) in {FIXTURE_FILE} returning ({what}, inputs)"


# --------------------------------------------------------------------------- errors


def fmt_exc(e: BaseException, limit: int = 160) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if "can't allocate memory" in msg:  # keep what the limit report looks for (sandbox.classify_limit)
        msg = msg[msg.index("DefaultCPUAllocator"):] if "DefaultCPUAllocator" in msg else msg
    if len(msg) > limit and ". " in msg[:limit]:
        msg = msg[: msg.index(". ") + 1]
    if len(msg) > limit:
        msg = msg[: limit - 3].rstrip() + "..."
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def is_version_error(e: BaseException) -> bool:
    s = str(e)
    return isinstance(e, RuntimeError) and ("modified by an inplace operation" in s or " is at version " in s)


def is_dtype_error(e: BaseException) -> bool:
    s = str(e)
    low = s.lower()
    return isinstance(e, (RuntimeError, TypeError)) and (
        "same dtype" in low
        or "scalar type" in low
        or ("double" in low and "float" in low)
    )


def is_download_error(e: BaseException) -> bool:
    s = f"{type(e).__name__} {e}"
    return any(k in s for k in ("URLError", "urlopen", "HTTPError", "ConnectionError", "Temporary failure in name",
                                "Name or service not known", "huggingface.co", "download"))


def is_gpu_error(e: BaseException) -> bool:
    s = str(e)
    return (
        "not compiled with CUDA" in s
        or "ATen_cuda" in s
        or "NVIDIA driver" in s
        or "No CUDA GPUs" in s
        or "Cannot access accelerator device" in s
        or ("CUDA" in s and "not available" in s)
    )


# --------------------------------------------------------------------------- determinism


@contextlib.contextmanager
def seeded(seed: int):
    """torch (CPU), Python and NumPy RNGs seeded for the block, then restored.

    Uses the CPU default generator directly: torch.manual_seed/fork_rng also queue lazy
    CUDA/XPU/MTIA seeding calls that capture a stack trace each time (slow, and never needed
    here because every check runs on the CPU).
    """
    gen = torch.default_generator
    t_state = gen.get_state()
    py_state = random.getstate()
    np_state = np.random.get_state() if np is not None else None
    gen.manual_seed(seed)
    random.seed(seed)
    if np is not None:
        np.random.seed(seed)
    try:
        yield
    finally:
        gen.set_state(t_state)
        random.setstate(py_state)
        if np is not None:
            np.random.set_state(np_state)


# --------------------------------------------------------------------------- cuda -> cpu


def _to_cpu(d: Any) -> Any:
    if isinstance(d, str) and d.startswith("cuda"):
        return torch.device("cpu")
    if isinstance(d, torch.device) and d.type == "cuda":
        return torch.device("cpu")
    return d


class CudaToCpu(torch.overrides.TorchFunctionMode):
    """Runs code written for CUDA on the CPU: device arguments and `.cuda()` are redirected."""

    def __init__(self) -> None:
        super().__init__()
        self.redirects = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.cuda or func is torch.Tensor.pin_memory:
            self.redirects += 1
            return args[0]
        if "device" in kwargs:
            new = _to_cpu(kwargs["device"])
            if new is not kwargs["device"]:
                self.redirects += 1
                kwargs["device"] = new
        if func is torch.Tensor.to and len(args) > 1:
            new_args = (args[0],) + tuple(_to_cpu(a) for a in args[1:])
            if any(a is not b for a, b in zip(new_args, args)):
                self.redirects += 1
            args = new_args
        return func(*args, **kwargs)


@contextlib.contextmanager
def cuda_redirect(active: bool):
    if not active:
        yield None
        return
    saved = (nn.Module.cuda, torch.cuda.synchronize)
    nn.Module.cuda = lambda self, device=None: self  # type: ignore[assignment]
    torch.cuda.synchronize = lambda device=None: None  # type: ignore[assignment]
    mode = CudaToCpu()
    try:
        with mode:
            yield mode
    finally:
        nn.Module.cuda, torch.cuda.synchronize = saved  # type: ignore[assignment]


# --------------------------------------------------------------------------- loading

_ids = itertools.count()


def package_of(path: str, root: str | None) -> str | None:
    """The dotted package of `path` relative to `root` (for relative imports), or None."""
    if not path or not path.endswith(".py"):
        return None
    from .sandbox import package_root

    pkg = package_root(path)[1]  # the `__init__.py` chain (src layouts, nested projects)
    if pkg or not root:
        return pkg or None
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel.startswith(".."):
        return None
    parts = rel[:-3].split(os.sep)[:-1]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def exec_module(tree: ast.Module, tag: str, path: str, package: str | None = None) -> types.ModuleType:
    """Exec a (stripped) module AST into a fresh module that is in sys.modules during the exec."""
    name = f"_gradfix_{tag}_{next(_ids)}"
    mod = types.ModuleType(name)
    mod.__file__ = f"<gradfix:{tag}:{path}>"
    if package:
        mod.__package__ = package  # relative imports resolve against the real package
    sys.modules[name] = mod
    try:
        exec(compile(tree, path or "<gradfix>", "exec"), mod.__dict__)
    finally:
        sys.modules.pop(name, None)
    return mod


# --------------------------------------------------------------------------- tensors


def flatten(obj: Any, acc: list | None = None) -> list:
    acc = [] if acc is None else acc
    if torch.is_tensor(obj):
        acc.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            flatten(v, acc)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            flatten(v, acc)
    elif obj is None:
        pass
    elif isinstance(obj, (bool, int, float, complex, str)):
        acc.append(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            flatten(getattr(obj, f.name), acc)
    return acc


def projected_loss(tensors: list) -> torch.Tensor | None:
    """sum_i (out_i * R_i).sum() with fixed random projections R_i; never a plain .sum()."""
    total = None
    for i, t in enumerate(tensors):
        if not torch.is_tensor(t) or not t.is_floating_point():
            continue
        g = torch.Generator().manual_seed(SEED_PROJ + i)
        r = torch.randn(tuple(t.shape), generator=g, dtype=torch.float64).to(dtype=t.dtype)
        term = (t * r).sum()
        total = term if total is None else total + term
    return total


def rel_diff(a: Any, b: Any) -> float:
    """Norm-relative difference ||a-b|| / max(||a||, ||b||); inf for None-vs-tensor or shape changes."""
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        return math.inf
    if not torch.is_tensor(a) or not torch.is_tensor(b):
        if torch.is_tensor(a) or torch.is_tensor(b):
            return math.inf
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            a, b = torch.tensor(float(a), dtype=torch.float64), torch.tensor(float(b), dtype=torch.float64)
        else:
            return 0.0 if a == b else 1.0
    if tuple(a.shape) != tuple(b.shape):
        return math.inf
    if not (a.is_floating_point() or a.is_complex()) or not (b.is_floating_point() or b.is_complex()):
        return 0.0 if torch.equal(a.detach().cpu(), b.detach().cpu()) else 1.0
    a = a.detach().to(torch.float64)
    b = b.detach().to(torch.float64)
    na, nb = torch.isnan(a), torch.isnan(b)
    if not torch.equal(na, nb):
        return math.inf
    infs = torch.isinf(a) | torch.isinf(b)
    if bool(infs.any()):
        if not torch.equal(a[infs], b[infs]):
            return math.inf
    bad = na | infs
    if bool(bad.any()):
        a = torch.where(bad, torch.zeros_like(a), a)
        b = torch.where(bad, torch.zeros_like(b), b)
    s = max(float(a.norm()), float(b.norm()))
    if s == 0.0:
        return 0.0
    return float((a - b).norm()) / s


def _norm(t: Any) -> float:
    if not torch.is_tensor(t) or not t.is_floating_point():
        return 0.0
    return float(t.detach().to(torch.float64).norm())


# --------------------------------------------------------------------------- runs


@dataclass
class Run:
    outputs: list
    grads: dict  # param name -> tensor | None
    input_grads: list
    buffers: dict


def make_leaves(inputs: tuple, dtype: torch.dtype) -> list:
    leaves = []
    for x in inputs:
        if torch.is_tensor(x) and x.is_floating_point():
            leaves.append(x.detach().to(dtype).clone().requires_grad_(True))
        elif torch.is_tensor(x):
            leaves.append(x.detach().clone())
        else:
            leaves.append(x)
    return leaves


def _fresh_inputs(leaves: list) -> list:
    # A fresh non-leaf clone per run: in-place ops on the input are legal and never shared.
    return [x.clone() if torch.is_tensor(x) else copy.deepcopy(x) for x in leaves]


def run_once(obj: Any, leaves: list, mode: str, allow_mutation: bool = False, only: list[int] | None = None) -> Run:
    """One forward + backward of the projected test loss; grads w.r.t. params and input leaves.

    `only`: indices of the (flattened) outputs that enter the test loss (default: all).
    """
    restore = None
    if isinstance(obj, nn.Module):
        try:
            m = copy.deepcopy(obj)
        except Exception:
            m = obj
            restore = {k: v.detach().clone() for k, v in obj.state_dict().items()}
        m.train(mode == "train")
        named = [(n, p) for n, p in m.named_parameters() if p.requires_grad]
    else:
        m = obj
        named = []
    ctx = torch.autograd.graph.allow_mutation_on_saved_tensors() if allow_mutation else contextlib.nullcontext()
    try:
        with seeded(SEED_RUN), ctx:
            xs = _fresh_inputs(leaves)
            out = m(*xs)
            outs = flatten(out)
            loss = projected_loss(outs if only is None else [o if i in only else None for i, o in enumerate(outs)])
            in_leaves = [x for x in leaves if torch.is_tensor(x) and x.requires_grad]
            targets = [p for _, p in named] + in_leaves
            if loss is not None and loss.requires_grad and targets:
                grads = list(torch.autograd.grad(loss, targets, allow_unused=True))
            else:
                grads = [None] * len(targets)
        outputs = [o.detach().clone() if torch.is_tensor(o) else o for o in outs]
        pgrads = {n: g for (n, _), g in zip(named, grads[: len(named)])}
        igrads = grads[len(named):]
        buffers = {n: b.detach().clone() for n, b in m.named_buffers()} if isinstance(m, nn.Module) else {}
        return Run(outputs, pgrads, igrads, buffers)
    finally:
        if restore is not None:
            obj.load_state_dict(restore)


def compare_runs(o: Run, n: Run, mode: str, scale: float | None = None) -> list[tuple[float, str]]:
    """(norm-relative difference, description) for every tensor; `scale`: expect n = scale * o for grads."""
    out: list[tuple[float, str]] = []
    where = f"({mode} mode)" if mode != "call" else ""

    def add(rel: float, label: str, none_note: str | None = None) -> None:
        if none_note is not None:
            out.append((math.inf, f"{none_note} {where}".strip()))
        else:
            out.append((rel, f"{label} differs: norm-relative {rel:.1e} {where}".strip()))

    if scale is None:
        if len(o.outputs) != len(n.outputs):
            out.append((math.inf, f"the number of outputs differs: {len(o.outputs)} vs {len(n.outputs)} {where}".strip()))
        else:
            for i, (a, b) in enumerate(zip(o.outputs, n.outputs)):
                if torch.is_tensor(a) and torch.is_tensor(b) and tuple(a.shape) != tuple(b.shape):
                    out.append((math.inf, f"output {i} changes shape from {tuple(a.shape)} to {tuple(b.shape)} {where}".strip()))
                else:
                    add(rel_diff(a, b), f"output {i}")
    s = 1.0 if scale is None else scale
    for name in list(o.grads) + [k for k in n.grads if k not in o.grads]:
        a, b = o.grads.get(name), n.grads.get(name)
        if name not in o.grads or name not in n.grads:
            out.append((math.inf, f"parameter {name} exists in only one version {where}".strip()))
        elif a is None and b is None:
            continue
        elif a is None or b is None:
            add(math.inf, "", f"grad of {name} is {'None' if a is None else 'a tensor'} in the original "
                f"but {'None' if b is None else 'a tensor'} in the rewrite")
        else:
            add(rel_diff(a * s, b), f"grad of {name}")
    multi = len(o.input_grads) > 1
    for i, (a, b) in enumerate(zip(o.input_grads, n.input_grads)):
        label = f"input {i} grad" if multi else "input grad"
        if a is None and b is None:
            continue
        if a is None or b is None:
            add(math.inf, "", f"{label} is {'None' if a is None else 'a tensor'} in the original "
                f"but {'None' if b is None else 'a tensor'} in the rewrite")
        else:
            add(rel_diff(a * s, b), label)
    for name in set(o.buffers) | set(n.buffers):
        if name not in o.buffers or name not in n.buffers:
            out.append((math.inf, f"buffer {name} exists in only one version {where}".strip()))
        else:
            add(rel_diff(o.buffers[name], n.buffers[name]), f"buffer {name}")
    return out


# --------------------------------------------------------------------------- input inference

_CONV_SIZES = {1: (32, 28, 64, 16, 8, 224, 128), 2: (32, 28, 64, 16, 8, 224), 3: (16, 8, 32)}


def _first_known_leaf(model: nn.Module) -> nn.Module | None:
    for m in model.modules():
        if any(True for _ in m.children()):
            continue
        if isinstance(m, (nn.modules.conv._ConvNd, nn.Linear, nn.Embedding, nn.EmbeddingBag, nn.RNNBase)):
            return m
    return None


def _candidate_inputs(leaf: nn.Module, dtype: torch.dtype) -> list[Callable[[], tuple]]:
    """Input makers (lazy: a 224x224 candidate is only built when the smaller ones failed)."""

    def rn(*shape: int) -> Callable[[], tuple]:
        def make() -> tuple:
            g = torch.Generator().manual_seed(SEED_INPUT)
            return (torch.randn(shape, generator=g, dtype=dtype),)

        make.shape = shape  # type: ignore[attr-defined]
        return make

    out: list[Callable[[], tuple]] = []
    if isinstance(leaf, nn.modules.conv._ConvNd):
        dims = len(leaf.kernel_size)
        chans = (leaf.in_channels,) if leaf.in_channels else (3, 1)
        for c in chans:
            for s in _CONV_SIZES.get(dims, (16,)):
                out.append(rn(BATCH, c, *([s] * dims)))
    elif isinstance(leaf, nn.Linear):
        feats = (leaf.in_features,) if leaf.in_features else (16, 32, 8, 64, 3)
        for f in feats:
            out.append(rn(BATCH, f))
            out.append(rn(BATCH, 8, f))
    elif isinstance(leaf, (nn.Embedding, nn.EmbeddingBag)):
        n = leaf.num_embeddings

        def make_ids() -> tuple:
            g = torch.Generator().manual_seed(SEED_INPUT)
            return (torch.randint(0, n, (BATCH, 16), generator=g),)

        make_ids.shape = (BATCH, 16)  # type: ignore[attr-defined]
        out.append(make_ids)
    elif isinstance(leaf, nn.RNNBase):
        if leaf.batch_first:
            out.append(rn(BATCH, 8, leaf.input_size))
        else:
            out.append(rn(8, BATCH, leaf.input_size))
    return out


def required_params(fn: Callable, skip_first: bool) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    ps = list(sig.parameters.values())
    if skip_first and ps:
        ps = ps[1:]
    return [
        p.name
        for p in ps
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
    ]


def infer_input(name: str, models: list[nn.Module], dtype: torch.dtype,
                explain: Callable[[BaseException, str], str] | None = None) -> tuple:
    req = required_params(type(models[0]).forward, skip_first=True)
    if len(req) == 0:
        return ()
    leaf = _first_known_leaf(models[0])
    if leaf is None:
        raise Untestable(
            f"input shape unknown for {name}: it has no Conv/Linear/Embedding/RNN layer to infer the input from; "
            + fixture_hint(name)
        )
    cands = _candidate_inputs(leaf, dtype)
    if len(req) > 1:
        # `forward(self, q, k, v)`, `forward(self, x, y)`: try every argument shaped like the first
        # layer's input (distinct values); masks, lengths and the like need a fixture
        cands = [_replicated(make, len(req)) for make in cands]
    last: BaseException | None = None
    for make in cands:
        cand = make()
        for model in models:
            try:
                try:
                    m = copy.deepcopy(model)
                except Exception:  # noqa: BLE001 - hook-based weight_norm holds a computed weight deepcopy refuses
                    m = model      # a no_grad forward in eval mode leaves it as it was (its mode is restored)
                was = m.training
                try:
                    m.eval()
                    with torch.no_grad(), seeded(SEED_RUN):
                        m(*_fresh_inputs(list(cand)))
                finally:
                    m.train(was)
                return cand
            except Exception as e:  # noqa: BLE001 - user code
                if last is None or model is models[0]:
                    last = e
    if last is not None and dtype == torch.float64 and is_dtype_error(last):
        raise _RetryFp32()
    if last is not None and explain is not None and isinstance(last, NameError):
        why = explain(last, name)
        if why != fmt_exc(last):
            raise Untestable(why)
    tried = "; ".join(str(tuple(getattr(c, "shape", ()))) for c in cands[:8])
    each = (f"forward() takes {len(req)} arguments ({', '.join(req)}), each tried with the shape inferred from its "
            f"first layer" if len(req) > 1 else "forward failed on every input inferred from its first layer")
    raise Untestable(
        f"input shape unknown for {name}: {each} {type(leaf).__name__} (tried {tried}; last error "
        f"{fmt_exc(last) if last else 'none'}); " + fixture_hint(name)
    )


def _replicated(make: Callable[[], tuple], count: int) -> Callable[[], tuple]:
    """`count` inputs shaped like `make`'s one: the first is its, the others drawn with other seeds."""

    def multi() -> tuple:
        first = make()[0]
        others = []
        for i in range(1, count):
            if first.is_floating_point():
                g = torch.Generator().manual_seed(SEED_INPUT + i)
                others.append(torch.randn(first.shape, generator=g, dtype=first.dtype))
            else:
                others.append(first.clone())
        return (first, *others)

    multi.shape = getattr(make, "shape", ())  # type: ignore[attr-defined]
    return multi


def has_lazy(model: nn.Module) -> bool:
    from torch.nn.parameter import is_lazy

    return any(is_lazy(p) for p in model.parameters()) or any(is_lazy(b) for b in model.buffers())


# --------------------------------------------------------------------------- the request context


@dataclass
class Ctx:
    req: VerifyRequest
    analysis: S.Analysis
    stripped: dict  # tag -> S.Stripped
    redirect: bool = False
    dtype: torch.dtype = torch.float64
    tol: float = TOL64
    weak_units: list = field(default_factory=list)
    _mods: dict = field(default_factory=dict)
    _fixtures: Any = None
    _fixtures_loaded: bool = False

    def module(self, tag: str) -> types.ModuleType:
        if tag not in self._mods:
            self._mods[tag] = self.load_fresh(tag)
        return self._mods[tag]

    def load_fresh(self, tag: str) -> types.ModuleType:
        if tag == "new":
            self.module("old")  # a failure to load the original is untestable, not a failure of the rewrite
        try:
            with seeded(SEED_BUILD):
                return exec_module(
                    self.stripped[tag].tree, tag, self.req.path, package_of(self.req.path, self.req.project_root)
                )
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            if tag == "new":
                raise FailedCheck(f"new version raises {fmt_exc(e)} when the rewritten module is loaded")
            which = "original" if tag == "old" else "rewritten"
            hint = ""
            if isinstance(e, ImportError) and "relative import" in str(e):
                hint = ("; relative imports need the file's package: an __init__.py in its folder (and in each package "
                        "folder above it), or the project root above it")
            if is_gpu_error(e):
                raise Untestable(f"needs GPU: loading the {which} module raises {fmt_exc(e)}")
            if not hint and isinstance(e, ImportError):
                missing = getattr(e, "name", None) or ""
                if missing.split(".")[0] in ("triton", "cupy", "pycuda", "apex"):
                    raise Untestable(f"needs GPU: the {which} module imports {missing}, which is not available here")
                hint = (
                    "; install the missing package where the verifier runs, or pass the project root so that "
                    "local modules resolve"
                )
            raise Untestable(f"module not importable in isolation: {fmt_exc(e)} (loading the {which} file){hint}")

    def fixtures(self) -> list:
        """The fixture files from the checked file's folder up to the project root, nearest first."""
        if not self._fixtures_loaded:
            self._fixtures_loaded = True
            from .sandbox import fixture_dirs

            self._fixtures = []
            for d in fixture_dirs(self.req.path, self.req.project_root):
                path = os.path.join(d, FIXTURE_FILE)
                if not os.path.isfile(path):
                    continue
                spec = importlib.util.spec_from_file_location("gradfix_fixtures", path)
                mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
                sys.modules["gradfix_fixtures"] = mod
                try:
                    spec.loader.exec_module(mod)  # type: ignore[union-attr]
                except BaseException as e:  # noqa: BLE001
                    raise Untestable(f"{path} could not be loaded: {fmt_exc(e)}")
                finally:
                    sys.modules.pop("gradfix_fixtures", None)
                self._fixtures.append(mod)
        return self._fixtures

    def fixture(self, name: str) -> Callable | None:
        for fx in self.fixtures():
            f = getattr(fx, f"fixture_{name}", None)
            if callable(f):
                return f
        return None

    def explain(self, e: BaseException, unit: str) -> str:
        if isinstance(e, NameError):
            name = getattr(e, "name", None)
            dropped = set()
            for s in self.stripped.values():
                dropped |= s.dropped_names
            if name and name in dropped:
                return (
                    f"{unit} uses the module-level name '{name}', which is set by module-level code the verifier "
                    f"does not execute; " + fixture_hint(unit)
                )
        return fmt_exc(e)

    def finish(self, o: Outcome) -> Outcome:
        detail = o.detail.rstrip()
        if o.verdict == "untestable":  # nothing was checked, so no notes about how
            return Outcome(o.verdict, detail, o.unit)
        if self.weak_units:
            detail = _sentence(detail) + " Weak check: fp32 with tolerance 1e-4, because the code does not run in fp64."
        if self.redirect:
            if detail.endswith(".") and not detail.endswith(".."):
                detail = detail[:-1]
            detail += f" ({REDIRECT_NOTE})."
        return Outcome(o.verdict, detail, o.unit)


def _sentence(s: str) -> str:
    return s if s.endswith(".") else s + "."


# --------------------------------------------------------------------------- module check


def _build(ctx: Ctx, name: str, mod: types.ModuleType) -> tuple[Any, tuple | None]:
    fx = ctx.fixture(name)
    if fx is not None:
        with seeded(SEED_BUILD):
            res = fx(mod)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise Untestable(f"fixture_{name} must return (module, inputs), got {type(res).__name__}")
        obj, inputs = res
        if torch.is_tensor(inputs):
            inputs = (inputs,)
        inputs = tuple(inputs)
        return obj, inputs
    obj = getattr(mod, name, None)
    if obj is None:
        raise Untestable(f"{name} is not defined once the module is loaded")
    if isinstance(obj, type) and issubclass(obj, nn.Module):
        req = required_params(obj.__init__, skip_first=True)
        if req:
            raise Untestable(f"constructor of {name} needs arguments ({', '.join(req)}); " + fixture_hint(name))
        with seeded(SEED_BUILD):
            return obj(), None
    if isinstance(obj, type):
        raise Untestable(f"class {name} is not an nn.Module, so there is no forward() to run; " + fixture_hint(name, "callable"))
    raise Untestable(f"function {name}: no call site to build its arguments from; " + fixture_hint(name, "function"))


def module_check(ctx: Ctx, name: str, scale: float | None = None) -> Outcome:
    try:
        return _module_check(ctx, name, scale)
    except _RetryFp32:
        pass
    ctx.dtype, ctx.tol = torch.float32, TOL32
    torch.set_default_dtype(torch.float32)
    try:
        out = _module_check(ctx, name, scale)
        if out.verdict != "untestable":
            ctx.weak_units.append(name)
        return out
    except _RetryFp32:
        return Outcome("untestable", f"{name} raises dtype errors in fp64 and in fp32", name)
    finally:
        ctx.dtype, ctx.tol = torch.float64, TOL64
        torch.set_default_dtype(torch.float64)


def _module_check(ctx: Ctx, name: str, scale: float | None) -> Outcome:
    built: dict[str, Any] = {}
    errs: dict[str, BaseException] = {}
    for tag in ("old", "new"):
        mod = ctx.module(tag)
        try:
            built[tag] = _build(ctx, name, mod)
        except Untestable as u:
            return Outcome("untestable", str(u), name)
        except Exception as e:  # noqa: BLE001 - user code
            errs[tag] = e
    if errs:
        if any(is_gpu_error(e) for e in errs.values()):
            e = next(iter(errs.values()))
            return Outcome("untestable", f"needs GPU: constructing {name} raises {fmt_exc(e)}", name)
        if "old" not in errs:
            return Outcome("failed", f"new version raises {ctx.explain(errs['new'], name)} when constructing {name}", name)
        e = errs["old"]
        why = ctx.explain(e, name)
        hint = "" if "fixture_" in why else "; " + fixture_hint(name)
        if is_download_error(e):
            return Outcome("untestable", f"needs downloaded weights: constructing {name} raises {why} (no network "
                           f"here){hint}", name)
        if "new" not in errs:
            return Outcome("untestable", f"constructing the original {name} raises {why}{hint}", name)
        return Outcome("untestable", f"constructing {name} raises {why} in both versions{hint}", name)

    (old, old_in), (new, _new_in) = built["old"], built["new"]
    is_module = isinstance(old, nn.Module) and isinstance(new, nn.Module)
    if not callable(old) or not callable(new):
        return Outcome("untestable", f"fixture_{name} did not return a callable unit", name)
    if is_module:
        old.to(ctx.dtype)
        new.to(ctx.dtype)

    try:
        inputs = old_in if old_in is not None else infer_input(name, [old, new], ctx.dtype, ctx.explain)
    except Untestable as u:
        return Outcome("untestable", str(u), name)
    leaves = make_leaves(inputs, ctx.dtype)

    if is_module:
        if has_lazy(old) or has_lazy(new):
            for m in (old, new):
                try:
                    with torch.no_grad(), seeded(SEED_RUN):
                        m.eval()(*_fresh_inputs(leaves))
                except Exception:  # noqa: BLE001 - reported by the real runs below
                    pass
                m.to(ctx.dtype)
        sd_old, sd_new = old.state_dict(), new.state_dict()
        if set(sd_old) != set(sd_new):
            only_o = sorted(set(sd_old) - set(sd_new))[:3]
            only_n = sorted(set(sd_new) - set(sd_old))[:3]
            return Outcome(
                "untestable",
                f"state mapping needed: the state_dict keys of {name} differ (original only: {only_o}, rewrite only: "
                f"{only_n}), so the weights cannot be copied from one version to the other",
                name,
            )
        bad = [k for k in sd_old if torch.is_tensor(sd_old[k]) and tuple(sd_old[k].shape) != tuple(sd_new[k].shape)]
        if bad:
            return Outcome(
                "untestable",
                f"state mapping needed: {bad[0]} has shape {tuple(sd_old[bad[0]].shape)} in the original and "
                f"{tuple(sd_new[bad[0]].shape)} in the rewrite",
                name,
            )
        try:
            new.load_state_dict(sd_old)
        except Exception as e:  # noqa: BLE001
            return Outcome("untestable", f"state mapping needed: copying the weights of {name} failed ({fmt_exc(e)})", name)

    modes = ("eval", "train") if is_module else ("call",)
    runs: dict[str, dict[str, Any]] = {"old": {}, "new": {}}
    for mode in modes:
        for tag, obj in (("old", old), ("new", new)):
            try:
                runs[tag][mode] = run_once(obj, leaves, mode)
            except Exception as e:  # noqa: BLE001 - user code
                runs[tag][mode] = e

    all_errs = [r for t in runs.values() for r in t.values() if isinstance(r, BaseException)]
    old_errs = [r for r in runs["old"].values() if isinstance(r, BaseException)]
    if ctx.dtype == torch.float64 and any(is_dtype_error(e) for e in old_errs):
        raise _RetryFp32()  # the original itself does not run in fp64 (hard-coded float32 tensors)
    if any(is_gpu_error(e) for e in all_errs):
        e = next(e for e in all_errs if is_gpu_error(e))
        return Outcome("untestable", f"needs GPU: {name} raises {fmt_exc(e)}", name)

    ref: dict[str, Run] = {}
    crash: dict[str, BaseException] = {}
    pending_untestable: Outcome | None = None
    for mode in modes:
        o, n = runs["old"][mode], runs["new"][mode]
        wm = f" ({mode} mode)" if mode != "call" else ""
        if isinstance(o, Run) and isinstance(n, Run):
            ref[mode] = o
        elif isinstance(o, Run):
            return Outcome("failed", f"new version raises {ctx.explain(n, name)}{wm}, while the original runs", name)
        elif isinstance(n, Run):
            if is_version_error(o):
                try:
                    ref[mode] = run_once(old, leaves, mode, allow_mutation=True)
                    crash[mode] = o
                except Exception as e2:  # noqa: BLE001
                    pending_untestable = pending_untestable or Outcome(
                        "untestable",
                        f"the original raises {fmt_exc(o)}{wm}, and rerunning it with mutation of saved tensors "
                        f"allowed raises {fmt_exc(e2)}, so there is no reference result for the rewrite",
                        name,
                    )
            else:
                pending_untestable = pending_untestable or Outcome(
                    "untestable",
                    f"the original raises {ctx.explain(o, name)}{wm} while the rewrite runs, so there is no reference "
                    f"result to compare the rewrite with",
                    name,
                )
        else:
            if is_version_error(o) and is_version_error(n):
                note = ""
                try:
                    ro = run_once(old, leaves, mode, allow_mutation=True)
                    rn = run_once(new, leaves, mode, allow_mutation=True)
                    worst_i = max((d[0] for d in compare_runs(ro, rn, mode)), default=0.0)
                    note = (
                        f"; with mutation of saved tensors allowed both compute the same result (norm-relative "
                        f"{worst_i:.1e}), so the rewrite keeps the intended gradient"
                        if worst_i <= ctx.tol
                        else f"; with mutation of saved tensors allowed they differ (norm-relative {worst_i:.1e})"
                    )
                except Exception:  # noqa: BLE001
                    pass
                pending_untestable = pending_untestable or Outcome(
                    "untestable",
                    f"both versions raise RuntimeError ({_short_version_msg(o)}){wm}, so there is no gradient to "
                    f"compare{note}; the in-place operation that breaks backward is still in the code (fix it first)",
                    name,
                )
            elif type(o) is type(n) and _same_error(o, n):
                why = ctx.explain(o, name)
                hint = "" if "fixture_" in why else " on the inferred input; " + fixture_hint(name)
                pending_untestable = pending_untestable or Outcome(
                    "untestable", f"both versions raise {why}{wm}{hint}", name
                )
            else:
                return Outcome(
                    "failed", f"new version raises {ctx.explain(n, name)}{wm}; the original raised {fmt_exc(o)}", name
                )
    if pending_untestable is not None:
        return pending_untestable

    diffs: list[tuple[float, str]] = []
    for mode in modes:
        diffs += compare_runs(ref[mode], runs["new"][mode], mode, scale)
    worst = max(diffs, key=lambda d: d[0]) if diffs else (0.0, "")
    mode_txt = " and ".join(modes) + (" mode" if is_module else "")
    n_params = len(ref[modes[0]].grads)
    n_bufs = len(ref[modes[0]].buffers)
    prec = "fp64" if ctx.dtype == torch.float64 else "fp32"

    if scale is not None:
        # Each output must be unchanged or scaled by the factor (a forward returning (logits, loss)
        # scales only the loss); the gradient check then uses the scaled outputs only.
        scaled: set[int] = set()
        for mode in modes:
            o_out, n_out = ref[mode].outputs, runs["new"][mode].outputs
            if len(o_out) != len(n_out):
                return Outcome("failed", f"the number of outputs changes from {len(o_out)} to {len(n_out)}", name)
            for i, (a, b) in enumerate(zip(o_out, n_out)):
                if not torch.is_tensor(a) or not a.is_floating_point():
                    continue
                if rel_diff(a * scale if torch.is_tensor(b) else a, b) <= ctx.tol and rel_diff(a, b) > ctx.tol:
                    scaled.add(i)
                elif rel_diff(a, b) > ctx.tol:
                    r = _norm(b) / _norm(a) if _norm(a) else math.inf
                    return Outcome(
                        "failed",
                        f"output {i} changes by x{r:.3g}, not x{scale:g} as the removed factor says, nor is it unchanged "
                        f"(norm-relative {rel_diff(a * scale, b):.1e} from x{scale:g}, {mode} mode)",
                        name,
                    )
        n_out = len(ref[modes[0]].outputs)
        if scaled and len(scaled) < sum(1 for o in ref[modes[0]].outputs if torch.is_tensor(o) and o.is_floating_point()):
            only = sorted(scaled)
            for mode in modes:
                ref[mode] = run_once(old, leaves, mode, allow_mutation=mode in crash, only=only)
                runs["new"][mode] = run_once(new, leaves, mode, only=only)
            diffs = [d for mode in modes for d in compare_runs(ref[mode], runs["new"][mode], mode, scale)]
            worst = max(diffs, key=lambda d: d[0]) if diffs else (0.0, "")
        which = "" if n_out <= 1 or not scaled else f" (through output{'s' if len(scaled) > 1 else ''} {', '.join(map(str, sorted(scaled)))})"
        olds = [g for m in modes for g in list(ref[m].grads.values()) + list(ref[m].input_grads) if g is not None]
        news = [g for m in modes for g in list(runs["new"][m].grads.values()) + list(runs["new"][m].input_grads) if g is not None]
        no, nn_ = math.sqrt(sum(_norm(g) ** 2 for g in olds)), math.sqrt(sum(_norm(g) ** 2 for g in news))
        if no == 0.0 and nn_ == 0.0:
            return Outcome("failed", f"{name} produces no gradient in either version, so the scale cannot be checked", name)
        if worst[0] <= ctx.tol:
            return Outcome(
                "expected-change",
                f"gradients x{scale:g} exactly as the removed factor says{which} ({prec}, {mode_txt}, "
                f"{plural(n_params, 'parameter')}; largest norm-relative deviation {worst[0]:.1e})",
                name,
            )
        ratio = nn_ / no if no else math.inf
        return Outcome(
            "failed",
            f"gradients change by x{ratio:.3g}, not x{scale:g} as the removed factor says (largest deviation from "
            f"x{scale:g}: {worst[1]})",
            name,
        )

    if worst[0] <= ctx.tol:
        if crash:
            e = next(iter(crash.values()))
            return Outcome(
                "fixes-crash",
                f"the original raises {type(e).__name__} ({_short_version_msg(e)}) in {' and '.join(crash)} mode; the "
                f"rewrite runs and equals the original's intended result (the original rerun with mutation of saved "
                f"tensors allowed; {prec}, largest norm-relative difference {worst[0]:.1e})",
                name,
            )
        ig = " and the input gradient" if any(g is not None for g in ref[modes[0]].input_grads) else ""
        return Outcome(
            "equivalent",
            f"outputs, gradients of {plural(n_params, 'parameter')}{ig} and {plural(n_bufs, 'buffer')} agree in {mode_txt} "
            f"({prec}, largest norm-relative difference {worst[0]:.1e})",
            name,
        )
    others = sum(1 for d in diffs if d[0] > ctx.tol) - 1
    more = f"; {others} more tensor{'s' if others != 1 else ''} differ" if others > 0 else ""
    if is_module and not crash:
        by_mode = {m: max((d[0] for d in compare_runs(ref[m], runs["new"][m], m, scale)), default=0.0) for m in modes}
        if by_mode.get("eval", 1.0) <= ctx.tol and by_mode.get("train", 0.0) > ctx.tol:
            more += " (eval mode agrees: the change affects train mode only, e.g. dropout draw order or batch statistics)"
    prefix = (
        f"the original raises {type(next(iter(crash.values()))).__name__} and the rewrite differs from its intended "
        f"result (the original rerun with mutation of saved tensors allowed): "
        if crash
        else ""
    )
    return Outcome("failed", f"{prefix}{worst[1]}{more}", name)


def _same_error(a: BaseException, b: BaseException) -> bool:
    norm = lambda e: re.sub(r"\d+", "N", str(e))  # noqa: E731 - versions, shapes and addresses may differ
    return norm(a) == norm(b)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _short_version_msg(e: BaseException) -> str:
    s = str(e)
    if "modified by an inplace operation" in s:
        return "a variable needed for gradient computation has been modified by an inplace operation"
    return fmt_exc(e)


# --------------------------------------------------------------------------- unit planning


def plan_units(ctx: Ctx, allow_function_fixture: bool = True) -> tuple[list[str], list[Outcome]]:
    """Which units to run a module check on, plus outcomes for changes that cannot be checked."""
    a = ctx.analysis
    units: list[str] = []
    outcomes: list[Outcome] = []
    if a.changed_classes or a.changed_functions or a.changed_constants:
        ctx.module("new")  # loads both; a rewrite that breaks loading fails here
    for n in a.only_in_one:
        outcomes.append(Outcome("untestable", f"{n} exists in only one version, so there is nothing to compare", n))
    for c in a.changed_classes:
        unreached = a.unreached_changed_methods(c)
        if unreached and set(a.changed_methods.get(c, [])) <= set(unreached):
            meths = ", ".join(f"{c}.{m}" for m in unreached)
            outcomes.append(
                Outcome(
                    "untestable",
                    f"the change is in {meths}, which construction and forward() do not reach, and the verifier runs "
                    f"only those; define fixture_{c}(mod) in {FIXTURE_FILE} returning (a module whose forward calls "
                    f"it, inputs)",
                    c,
                )
            )
        else:
            units.append(c)
    changed_names = set(a.changed_functions) | a.changed_constants
    if changed_names:
        deps = [d for d in a.classes_depending_on(changed_names) if d not in units and d not in a.changed_classes]
        mod = ctx.module("old")
        deps = [d for d in deps if isinstance(getattr(mod, d, None), type) and issubclass(getattr(mod, d), nn.Module)]
        for f in a.changed_functions:
            if allow_function_fixture and ctx.fixture(f) is not None:
                units.append(f)
            elif not deps:
                outcomes.append(
                    Outcome(
                        "untestable",
                        f"function {f}: no call site to build its arguments from; " + fixture_hint(f, "function"),
                        f,
                    )
                )
        consts = sorted(a.changed_constants)
        if consts and not deps:
            outcomes.append(
                Outcome("untestable", f"the changed module-level name(s) {', '.join(consts)} are used by no nn.Module "
                        f"class in the file", consts[0])
            )
        units.extend(deps)
    if a.module_code_changed:
        outcomes.append(
            Outcome(
                "untestable",
                "change is in module-level code, which the verifier does not execute; only changes inside functions "
                "and classes (or loss expressions and train steps the rule describes) can be checked",
                "<module>",
            )
        )
    return units, outcomes


def combine(outcomes: list[Outcome]) -> Outcome:
    if not outcomes:
        return Outcome("untestable", "no unit to check was found in the change", None)
    if len(outcomes) == 1:
        return outcomes[0]
    worst = max(outcomes, key=lambda o: verdict_rank(o.verdict))
    units = ", ".join(dict.fromkeys(o.unit for o in outcomes if o.unit))
    others = [o for o in outcomes if o is not worst]
    tail = "; ".join(f"{o.unit}: {o.verdict}" for o in others)
    return Outcome(worst.verdict, f"{worst.unit}: {worst.detail} (other units: {tail})", units or None)


# --------------------------------------------------------------------------- contracts


def check_equal(ctx: Ctx) -> Outcome:
    if ctx.analysis.identical:
        return Outcome("equivalent", "the rewrite does not change the code (only formatting or comments differ)", None)
    units, outcomes = plan_units(ctx)
    for u in units:
        outcomes.append(module_check(ctx, u))
    return combine(outcomes)


def check_scale(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    try:
        factor = float(c["factor"])
    except (KeyError, TypeError, ValueError):
        return Outcome("untestable", "scale contract without a numeric factor", None)
    has_expr = bool(c.get("expr_old")) and bool(c.get("expr_new"))
    try:
        units, outcomes = plan_units(ctx)
    except Untestable as u:
        if not has_expr:
            raise
        units, outcomes = [], [Outcome("untestable", str(u), None)]
    results = [module_check(ctx, u, scale=factor) for u in units]
    if results and all(r.verdict != "untestable" for r in results) and not outcomes:
        return combine(results)
    if has_expr:
        return expr_scale_check(ctx, factor)
    return combine(outcomes + results)


def expr_scale_check(ctx: Ctx, factor: float) -> Outcome:
    c = ctx.req.contract
    unit = "<module-level loss expression>"
    opaque = [str(o) for o in (c.get("opaque") or [])]
    try:
        eo = S.substitute_opaque(c["expr_old"], opaque)
        en = S.substitute_opaque(c["expr_new"], opaque)
    except SyntaxError as e:
        return Outcome("untestable", f"the loss expression does not parse: {fmt_exc(e)}", unit)
    ns: dict[str, Any] = {"torch": torch, "nn": nn, "F": torch.nn.functional, "math": math}
    if np is not None:
        ns.update(np=np, numpy=np)
    try:
        mod = ctx.module("old")
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
    except Untestable:
        pass
    free = sorted((eo.free | en.free) - set(ns))
    if free:
        return Outcome(
            "untestable",
            f"the loss expression uses {', '.join(free)}, which is neither opaque nor defined at module level; "
            f"the engine must list it in 'opaque'",
            unit,
        )
    leaves = []
    for i in range(len(opaque)):
        g = torch.Generator().manual_seed(SEED_INPUT + i)
        leaves.append(torch.randn(4, 3, generator=g, dtype=torch.float64).requires_grad_(True))
    if not leaves:
        return Outcome("untestable", "the loss expression has no opaque part to differentiate with respect to", unit)

    def evaluate(e: S.OpaqueExpr, tag: str) -> list:
        env = dict(ns)
        for i, leaf in enumerate(leaves):
            env[f"__gf_leaf{i}"] = leaf.clone()
        with seeded(SEED_RUN):
            val = eval(compile(e.code, f"<expr_{tag}>", "eval"), env)
            loss = projected_loss(flatten(val))
            if loss is None or not loss.requires_grad:
                return [None] * len(leaves)
            return list(torch.autograd.grad(loss, leaves, allow_unused=True))

    try:
        g_old = evaluate(eo, "old")
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"the original loss expression cannot be evaluated on tensors: {fmt_exc(e)}", unit)
    try:
        g_new = evaluate(en, "new")
    except Exception as e:  # noqa: BLE001
        return Outcome("failed", f"the rewritten loss expression raises {fmt_exc(e)}", unit)
    held = ", ".join(f"`{o}`" for o in opaque)
    worst = 0.0
    for a, b in zip(g_old, g_new):
        worst = max(worst, rel_diff(None if a is None else a * factor, b))
    no = math.sqrt(sum(_norm(g) ** 2 for g in g_old if g is not None))
    nn_ = math.sqrt(sum(_norm(g) ** 2 for g in g_new if g is not None))
    if no == 0.0 and nn_ == 0.0:
        return Outcome("failed", "the loss expression has zero gradient in both versions", unit)
    if worst <= TOL64:
        return Outcome(
            "expected-change",
            f"gradients x{factor:g} exactly as the removed factor says, checked on the loss expression with {held} "
            f"held as fp64 tensors (the model and loss function were not run; largest norm-relative deviation "
            f"{worst:.1e})",
            unit,
        )
    ratio = nn_ / no if no else math.inf
    return Outcome(
        "failed",
        f"gradients of the loss expression change by x{ratio:.3g}, not x{factor:g} as the removed factor says "
        f"(norm-relative deviation {worst:.1e}; {held} held as fp64 tensors)",
        unit,
    )


# --- clamp-moved -----------------------------------------------------------


class _Inputs:
    def __init__(self, spec: tuple):
        self.spec = spec
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        g = torch.Generator().manual_seed(SEED_INPUT + 97 * self.calls)
        out = []
        for x in self.spec:
            if torch.is_tensor(x) and x.is_floating_point():
                out.append(torch.randn(tuple(x.shape), generator=g, dtype=x.dtype))
            elif torch.is_tensor(x):
                hi = int(x.max()) + 1 if x.numel() else 1
                out.append(torch.randint(0, max(hi, 1), tuple(x.shape), generator=g))
            else:
                out.append(x)
        return out[0] if len(out) == 1 else tuple(out)


def _setup_namespace(ctx: Ctx, tag: str, setup: str, model_name: str) -> tuple[dict, nn.Module]:
    mod = ctx.load_fresh(tag)
    ns = mod.__dict__
    ns["__gf_loss"] = lambda *outs: projected_loss(flatten(outs))
    with seeded(SEED_BUILD):
        exec(compile(setup, "<setup>", "exec"), ns)
    model = ns.get(model_name)
    if not isinstance(model, nn.Module):
        raise Untestable(f"setup does not bind an nn.Module named '{model_name}'")
    model.to(ctx.dtype)
    return ns, model


def _optimizer_lr(ns: dict) -> float | None:
    lrs = []
    for v in ns.values():
        if isinstance(v, torch.optim.Optimizer):
            for g in v.param_groups:
                lr = g.get("lr")
                if isinstance(lr, (int, float)):
                    lrs.append(float(lr))
                elif torch.is_tensor(lr):
                    lrs.append(float(lr))
    return max(lrs) if lrs else None


def _eval_param(expr: str, ns: dict) -> torch.Tensor:
    try:
        p = eval(expr, ns)
    except Exception as e:  # noqa: BLE001
        raise Untestable(f"the contract's param `{expr}` cannot be evaluated after setup: {fmt_exc(e)}")
    if not torch.is_tensor(p):
        raise Untestable(f"the contract's param `{expr}` is not a tensor")
    return p


class _StepRaised(Exception):
    def __init__(self, tag: str, step: int, error: BaseException):
        super().__init__(str(error))
        self.tag, self.step, self.error = tag, step, error


def check_clamp_moved(ctx: Ctx, k: int = 3) -> Outcome:
    c = ctx.req.contract
    changed = ctx.analysis.changed_functions + ctx.analysis.changed_classes
    unit = c.get("unit") or (", ".join(changed) if changed else f"train step of {c.get('model') or 'model'}")
    missing = [key for key in ("setup", "step_old", "step_new", "param", "bounds") if not c.get(key)]
    if missing:
        return Outcome(
            "untestable",
            f"the rule found no {' / '.join(missing)} for a train-step check (it needs the model and optimizer built "
            f"by plain module-level assignments and one training loop)",
            unit,
        )
    try:
        # a bound is a number, or source text (`-clip`) evaluated against the module's constants
        lo, hi = (float(x) if not isinstance(x, str) else float(eval(x, dict(vars(ctx.module("old")))))
                  for x in c["bounds"])
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"clamp-moved contract has unusable bounds ({fmt_exc(e)})", unit)
    note = ""
    try:
        results, lr_used = _clamp_runs(ctx, c, lo, hi, k, allow_mutation=False)
    except _StepRaised as sr:
        if not (sr.tag == "old" and is_version_error(sr.error)):
            return _step_raised_outcome(sr, unit)
        # The model's forward breaks backward on its own (an in-place op this change does not
        # touch): compare the steps as that code intends them, with mutation of saved tensors allowed.
        try:
            results, lr_used = _clamp_runs(ctx, c, lo, hi, k, allow_mutation=True)
        except _StepRaised as sr2:
            return _step_raised_outcome(sr2, unit)
        note = (
            "; the steps ran with mutation of saved tensors allowed, because the model's forward raises "
            "'modified by an inplace operation' on its own"
        )
    out = _judge_clamp(ctx, c, results, lr_used, lo, hi, k, unit)
    return Outcome(out.verdict, out.detail + note, out.unit)


def _step_raised_outcome(sr: _StepRaised, unit: str) -> Outcome:
    if sr.tag == "old":
        return Outcome("untestable", f"the original train step raises {fmt_exc(sr.error)} (step {sr.step})", unit)
    return Outcome("failed", f"new version raises {fmt_exc(sr.error)} in train step {sr.step}", unit)


def _clamp_runs(ctx: Ctx, c: dict, lo: float, hi: float, k: int, allow_mutation: bool) -> tuple[dict, float]:
    setup, step_old, step_new, param_expr = c["setup"], c["step_old"], c["step_new"], c["param"]
    model_name = c.get("model") or "model"
    bound = max([abs(v) for v in (lo, hi) if math.isfinite(v) and v != 0] or [1.0])  # one-sided clamps
    results: dict[str, dict[str, list]] = {}
    lr_used: float | None = None
    spec: tuple | None = None
    for start in ("a", "b"):
        nss: dict[str, dict] = {}
        models: dict[str, nn.Module] = {}
        for tag in ("old", "new"):
            try:
                nss[tag], models[tag] = _setup_namespace(ctx, tag, setup, model_name)
            except Untestable:
                raise
            except Exception as e:  # noqa: BLE001
                which = "original" if tag == "old" else "rewritten"
                if is_gpu_error(e):
                    raise Untestable(f"needs GPU: setup raises {fmt_exc(e)}")
                raise Untestable(f"setup raises {ctx.explain(e, model_name)} in the {which} module")
        try:
            models["new"].load_state_dict(models["old"].state_dict())
        except Exception as e:  # noqa: BLE001
            raise Untestable(f"state mapping needed: {fmt_exc(e)}")
        if lr_used is None:
            hint = c.get("lr_hint")
            lr_used = float(hint) if hint else (_optimizer_lr(nss["old"]) or 1e-3)
        if spec is None:
            spec = infer_input(model_name, [models["old"], models["new"]], ctx.dtype, ctx.explain)
        for tag in ("old", "new"):
            nss[tag]["__gf_input"] = _Inputs(spec)
        if start == "b":
            for tag in ("old", "new"):
                p = _eval_param(param_expr, nss[tag])
                with torch.no_grad():
                    m = float(p.abs().max())
                    if m > 0:
                        p.mul_(2 * bound / m)
        per: dict[str, list] = {"old": [], "new": []}
        for tag, code in (("old", step_old), ("new", step_new)):
            ns = nss[tag]
            p0 = _eval_param(param_expr, ns)
            per[tag].append(
                {
                    "params": {n: q.detach().clone() for n, q in models[tag].named_parameters()},
                    "grads": {},
                    "param": p0.detach().clone(),
                }
            )
            try:
                compiled = compile(code, f"<step_{tag}>", "exec")
            except SyntaxError as e:
                raise Untestable(f"the contract's step_{tag} does not compile: {fmt_exc(e)}")
            for t in range(1, k + 1):
                mut = torch.autograd.graph.allow_mutation_on_saved_tensors() if allow_mutation else contextlib.nullcontext()
                try:
                    with seeded(SEED_RUN + t), mut:
                        exec(compiled, ns)
                except Exception as e:  # noqa: BLE001
                    raise _StepRaised(tag, t, e)
                per[tag].append(
                    {
                        "params": {n: q.detach().clone() for n, q in models[tag].named_parameters()},
                        "grads": {
                            n: (None if q.grad is None else q.grad.detach().clone())
                            for n, q in models[tag].named_parameters()
                        },
                        "param": _eval_param(param_expr, ns).detach().clone(),
                    }
                )
        results[start] = per
    assert lr_used is not None
    return results, lr_used


def _judge_clamp(ctx: Ctx, c: dict, results: dict, lr_used: float, lo: float, hi: float, k: int, unit: str) -> Outcome:
    param_expr = c["param"]
    bound = max([abs(v) for v in (lo, hi) if math.isfinite(v) and v != 0] or [1.0])  # one-sided clamps
    tol = ctx.tol
    slack = 1.1  # decoupled weight decay adds lr*wd*|w| to the documented lr-per-step divergence
    # (a) weights as built: equal while the clamp does not bind
    a = results["a"]
    equal_steps, bound_at, max_a = 0, None, 0.0
    for t in range(1, k + 1):
        before, after = a["old"][t - 1]["param"], a["old"][t]["param"]
        inside = bool((before >= lo).all() and (before <= hi).all() and (after >= lo).all() and (after <= hi).all())
        if not inside:
            bound_at = t
            break
        for n in a["old"][t]["params"]:
            d1 = rel_diff(a["old"][t]["params"][n], a["new"][t]["params"][n])
            d2 = rel_diff(a["old"][t]["grads"].get(n), a["new"][t]["grads"].get(n))
            max_a = max(max_a, d1, d2)
            if d1 > tol or d2 > tol:
                what = "parameter" if d1 >= d2 else "grad of"
                return Outcome(
                    "failed",
                    f"with the weights as built (the clamp does not bind) the rewrite differs from the original at step "
                    f"{t}: {what} {n} norm-relative {max(d1, d2):.1e}",
                    unit,
                )
        equal_steps = t
    # both starts: the rewrite keeps `param` within bounds
    for start, label in (("a", "weights as built"), ("b", f"{param_expr} scaled to |max| {2 * bound:g}")):
        for t in range(1, k + 1):
            p = results[start]["new"][t]["param"]
            if not bool((p >= lo - 1e-12).all() and (p <= hi + 1e-12).all()):
                return Outcome(
                    "failed",
                    f"the rewrite leaves {param_expr} outside [{lo:g}, {hi:g}] after step {t} ({label}): "
                    f"min {float(p.min()):.4g}, max {float(p.max()):.4g}",
                    unit,
                )
    # (b) outside the bounds: at most lr per step away from the original
    b = results["b"]
    max_b, max_b_name = 0.0, ""
    for t in range(1, k + 1):
        for n in b["old"][t]["params"]:
            d = float((b["old"][t]["params"][n] - b["new"][t]["params"][n]).abs().max())
            if d > max_b:
                max_b, max_b_name = d, n
            # other parameters: two runs whose Adam-like steps are each at most lr apart can
            # differ by 2 lr per step once the clamp changed their gradients
            if d > 2 * slack * lr_used * t + 1e-12:
                return Outcome(
                    "failed",
                    f"with {param_expr} outside the bounds, {n} deviates from the original by {d:.2e} after step {t}, "
                    f"more than 2 lr per step ({lr_used:g} x 2 x {t})",
                    unit,
                )
        d = float((b["old"][t]["param"] - b["new"][t]["param"]).abs().max())
        if d > slack * lr_used * t + 1e-12:
            return Outcome(
                "failed",
                f"with {param_expr} outside the bounds, it deviates from the original by {d:.2e} after step {t}, "
                f"more than lr per step ({lr_used:g} x {t})",
                unit,
            )
    bind_txt = f"the clamp first binds at step {bound_at}" if bound_at else "the clamp never binds"
    return Outcome(
        "expected-change",
        f"{k} train steps checked from 2 starts: with the weights as built, grads and params equal for {equal_steps} "
        f"step(s) ({bind_txt}; largest norm-relative difference {max_a:.1e}); with {param_expr} scaled to |max| "
        f"{2 * bound:g}, the rewrite stays within [{lo:g}, {hi:g}] and deviates from the original by at most "
        f"{max_b:.1e} ({max_b_name}; lr {lr_used:g} per step)",
        unit,
    )


# --- gains-grad ------------------------------------------------------------


def check_gains_grad(ctx: Ctx) -> Outcome:
    c = ctx.req.contract
    unit = c.get("unit") or ", ".join(ctx.analysis.changed_functions + ctx.analysis.changed_classes) or None
    if not c.get("call") and c.get("call_old") and c.get("call_new"):
        c = dict(c, call=c["call_new"])  # an inline term: its old and new source are given separately
    missing = [key for key in ("setup", "call", "model") if not c.get(key)]
    if missing:
        return Outcome(
            "untestable",
            f"the rule found no {' / '.join(missing)} for the term: it needs the model built by a plain module-level "
            f"assignment and the term's call in the training loop",
            unit,
        )
    setup, call, model_name = c["setup"], c["call"], c["model"]
    unit = unit or ("<module-level loss term>" if c.get("call_old") else call)
    nss: dict[str, dict] = {}
    models: dict[str, nn.Module] = {}
    for tag in ("old", "new"):
        try:
            nss[tag], models[tag] = _setup_namespace(ctx, tag, setup, model_name)
        except Untestable:
            raise
        except Exception as e:  # noqa: BLE001
            return Outcome("untestable", f"setup raises {ctx.explain(e, model_name)}", unit)
    try:
        models["new"].load_state_dict(models["old"].state_dict())
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"state mapping needed: {fmt_exc(e)}", unit)
    try:
        codes = {
            "old": compile(c.get("call_old") or call, "<call_old>", "eval"),
            "new": compile(c.get("call_new") or call, "<call_new>", "eval"),
        }
    except SyntaxError as e:
        return Outcome("untestable", f"the contract's term does not compile: {fmt_exc(e)}", unit)
    named = {tag: [(n, p) for n, p in models[tag].named_parameters() if p.requires_grad] for tag in nss}

    def term(tag: str) -> Any:
        with seeded(SEED_RUN):
            return eval(codes[tag], nss[tag])

    try:
        t_old = term("old")
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"the original term raises {fmt_exc(e)}", unit)
    try:
        t_new = term("new")
    except Exception as e:  # noqa: BLE001
        return Outcome("failed", f"new version raises {fmt_exc(e)} when evaluating {call}", unit)
    vo, vn = flatten(t_old), flatten(t_new)
    dv = max((rel_diff(a, b) for a, b in zip(vo, vn)), default=0.0) if len(vo) == len(vn) else math.inf
    if dv > ctx.tol:
        return Outcome("failed", f"the value of {call} changes: norm-relative {dv:.1e}", unit)
    lo = projected_loss(vo)
    if lo is not None and lo.requires_grad:
        g_old = torch.autograd.grad(lo, [p for _, p in named["old"]], allow_unused=True)
        nz = [n for (n, _), g in zip(named["old"], g_old) if g is not None and _norm(g) > 0]
        if nz:
            return Outcome("failed", f"the original term already has gradient for {', '.join(nz[:3])}", unit)
    ln = projected_loss(vn)
    if ln is None or not ln.requires_grad:
        return Outcome("failed", f"the rewritten term still carries no gradient to {model_name}'s parameters", unit)
    g_new = torch.autograd.grad(ln, [p for _, p in named["new"]], allow_unused=True)
    got = [n for (n, _), g in zip(named["new"], g_new) if g is not None and _norm(g) > 0]
    if not got:
        return Outcome("failed", f"the rewritten term's gradient is zero for every parameter of {model_name}", unit)
    # Sanity: the same gradient through .backward() into .grad as autograd.grad reports.
    for _, p in named["new"]:
        p.grad = None
    projected_loss(flatten(term("new"))).backward()  # type: ignore[union-attr]
    worst = 0.0
    for (n, p), g in zip(named["new"], g_new):
        worst = max(worst, rel_diff(g, p.grad))
    if worst > ctx.tol:
        return Outcome("failed", f"backward() and autograd.grad disagree on the new term (norm-relative {worst:.1e})", unit)
    value = ""
    if vo and torch.is_tensor(vo[0]) and vo[0].numel() == 1:
        value = f" ({float(vo[0]):.4g} in both)"
    return Outcome(
        "expected-change",
        f"the term now contributes gradient to {', '.join(got[:4])}{' and more' if len(got) > 4 else ''}; its value is "
        f"unchanged{value}",
        unit,
    )


# --------------------------------------------------------------------------- entry point


def _run(req: VerifyRequest) -> Outcome:
    try:
        old_tree = ast.parse(req.original)
    except SyntaxError as e:
        return Outcome("untestable", f"the original file does not parse: {fmt_exc(e)} (line {e.lineno})", None)
    try:
        new_tree = ast.parse(req.rewritten)
    except SyntaxError as e:
        return Outcome("failed", f"the rewritten file does not parse: {fmt_exc(e)} (line {e.lineno})", None)
    analysis = S.analyze(old_tree, new_tree, req.original, req.rewritten)
    contract = req.contract or {"kind": "equal"}
    kind = contract.get("kind", "equal")
    snippets = [str(contract.get(k) or "") for k in ("setup", "step_old", "step_new", "call", "expr_old", "expr_new")]
    stripped = {"old": S.strip_module(old_tree), "new": S.strip_module(new_tree)}
    ctx = Ctx(
        req=req,
        analysis=analysis,
        stripped=stripped,
        # The note goes on whenever the file targets CUDA; the redirect mode (which costs a
        # Python call per torch op) is only pushed when code that will run mentions cuda.
        redirect=S.uses_cuda(old_tree, new_tree, *snippets),
    )
    redirect_active = ctx.redirect and (
        stripped["old"].uses_cuda() or stripped["new"].uses_cuda() or S.uses_cuda(*snippets)
    )
    if kind == "reference":
        return check_reference(req)
    checks: dict[str, Callable[[Ctx], Outcome]] = {
        "equal": check_equal,
        "scale": check_scale,
        "clamp-moved": check_clamp_moved,
        "gains-grad": check_gains_grad,
    }
    if kind not in checks:  # the other kinds' modules load only when needed (libcst costs ~0.5 s cold)
        checks.update(extra_checks())
    if kind not in checks:
        why = "; ".join(f"{m} cannot be imported in {sys.executable}: {e}" for m, e in UNAVAILABLE.items())
        return Outcome("untestable", f"unknown contract kind {kind!r}" + (f" ({why})" if why else ""), None)
    if analysis.identical and kind == "equal":
        return Outcome("equivalent", "the rewrite does not change the code (only formatting or comments differ)", None)
    with cuda_redirect(redirect_active):
        default_unit = ", ".join(analysis.changed_classes + analysis.changed_functions) or None
        try:
            out = checks[kind](ctx)
        except Untestable as u:
            out = Outcome("untestable", str(u), default_unit)
        except FailedCheck as f:
            out = Outcome("failed", str(f), default_unit)
    return ctx.finish(out)


UNAVAILABLE: dict[str, str] = {}  # checks_* modules that could not be imported here, and why


@functools.lru_cache(maxsize=1)
def extra_checks() -> dict[str, Callable[[Ctx], Outcome]]:
    """Contract kinds defined in other modules of this package: each `gradfix/verify/checks_*.py`
    exports `CHECKS = {"kind": check_function}` (a check takes a Ctx and returns an Outcome)."""
    import importlib
    import pkgutil

    found: dict[str, Callable[[Ctx], Outcome]] = {}
    package = os.path.dirname(__file__)
    for info in sorted(pkgutil.iter_modules([package]), key=lambda m: m.name):
        if info.name.startswith("checks_"):
            try:
                module = importlib.import_module(f"gradfix.verify.{info.name}")
            except ImportError as e:  # e.g. libcst does not load in the project's interpreter
                UNAVAILABLE[info.name] = fmt_exc(e)
                continue
            found.update(getattr(module, "CHECKS", {}))
    return found


def check_reference(req: VerifyRequest) -> Outcome:
    """`reference`: the rewrite must equal a third version the rule supplies (the original without
    the hazard, e.g. without the in-place op on a logging alias). Equal to the original as well:
    equivalent; equal to the reference only: expected-change."""
    contract = dict(req.contract)
    plain = _run(replace(req, contract={"kind": "equal"}))
    if plain.verdict in ("equivalent", "fixes-crash"):
        return plain
    ref_src = contract.get("reference")
    if not ref_src:
        return plain
    vs_ref = _run(replace(req, original=ref_src, contract={"kind": "equal"}))
    why = contract.get("why") or "the hazard"
    if vs_ref.verdict in ("equivalent", "fixes-crash"):
        detail = (f"differs from the original, and equals the original without {why}: "
                  + _sentence(vs_ref.detail).rstrip(".") + f" (original vs rewrite: {plain.detail.rstrip('.')})")
        return Outcome("expected-change", detail, vs_ref.unit or plain.unit)
    if vs_ref.verdict == "untestable":
        return vs_ref
    return Outcome("failed", f"differs from the original without {why}: {vs_ref.detail}", vs_ref.unit or plain.unit)


def run_request(data: dict) -> dict:
    saved_dtype = torch.get_default_dtype()
    saved_path = list(sys.path)
    try:
        req = VerifyRequest.from_json(data)
        if req.project_root and req.project_root not in sys.path:  # the sandbox put the project's roots first
            sys.path.insert(0, req.project_root)
        here = os.path.dirname(os.path.abspath(req.path)) if req.path and not req.path.startswith("<") else ""
        if here and os.path.isdir(here) and here not in sys.path:
            sys.path.insert(1 if req.project_root else 0, here)  # sibling modules of the checked file
        torch.set_default_dtype(torch.float64)
        out = _run(req)
    except Untestable as u:
        out = Outcome("untestable", str(u), None)
    except Exception as e:  # noqa: BLE001
        out = Outcome("untestable", f"verifier error: {fmt_exc(e)}", None)
    finally:
        torch.set_default_dtype(saved_dtype)
        sys.path[:] = saved_path
    return {"verdict": out.verdict, "detail": out.detail, "unit": out.unit}
