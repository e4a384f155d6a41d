"""What every check shares: constants, the check's exceptions and Outcome, error classification,
seeded RNGs, the cuda->cpu redirect, loading a version as a module, and comparing tensors.
Imported only in the worker (this module imports torch)."""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
import math
import os
import random
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn

try:  # numpy is optional; seeded only when present
    import numpy as np
except Exception:  # pragma: no cover
    np = None  # type: ignore[assignment]


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
    direct: bool = False  # the change was evaluated from the contract itself (coverage by construction)



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


def package_of(path: str, root: str | None, levels: int = 0) -> str | None:
    """The dotted package of `path` relative to `root` (for relative imports), or None. `levels`: the deepest
    relative import of the module (`from ..utils import x` is 2)."""
    if not path or not path.endswith(".py"):
        return None
    from .sandbox import package_root

    top, pkg = package_root(path)  # the `__init__.py` chain (src layouts, nested projects)
    if pkg and root and levels > pkg.count(".") + 1:
        return namespace_above(top, pkg, levels - pkg.count(".") - 1, root) or pkg
    if pkg or not root:
        return pkg or None
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel.startswith(".."):
        return None
    parts = rel[:-3].split(os.sep)[:-1]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


NAMESPACE_PREFIX = "_gradfix_ns_"


def namespace_above(top: str, pkg: str, extra: int, root: str) -> str | None:
    """`models/RealNVP.py` doing `from ..utils import *`, with `models/__init__.py` and no `__init__.py` above
    it: the import reaches above the file's package, which works only where the author imported the folder above
    as a package (a namespace package, as Python 3 makes of any folder on the way). Relative imports name folders,
    not packages, so the folders decide what they load: the `extra` folders above the package (the nearest is `top`,
    which holds it), all inside the project `root`, become namespace packages under a name of ours, and `pkg` is
    returned below them. None when the folders leave the project or a name is not an identifier."""
    import hashlib
    import importlib.machinery

    folders = [os.path.realpath(top)]
    for _ in range(extra - 1):
        folders.insert(0, os.path.dirname(folders[0]))
    root = os.path.realpath(root)
    if not all(f == root or f.startswith(root.rstrip(os.sep) + os.sep) for f in folders):
        return None
    names = [f.split(os.sep)[-1] for f in folders[1:]]
    if not all(n.isidentifier() for n in names):
        return None
    base = NAMESPACE_PREFIX + hashlib.sha1(os.fsencode(folders[0])).hexdigest()[:10]
    if base not in sys.modules:
        ns = types.ModuleType(base)
        ns.__path__ = [folders[0]]
        ns.__package__ = base
        ns.__spec__ = importlib.machinery.ModuleSpec(base, None, is_package=True)
        ns.__spec__.submodule_search_locations = ns.__path__
        sys.modules[base] = ns
    return ".".join([base, *names, pkg])


def exec_module(tree: ast.Module, tag: str, path: str, package: str | None = None,
                extra: dict | None = None) -> types.ModuleType:
    """Exec a (stripped) module AST into a fresh module that is in sys.modules during the exec
    (`extra`: names bound in it first, e.g. the coverage marker)."""
    name = f"_gradfix_{tag}_{next(_ids)}"
    mod = types.ModuleType(name)
    mod.__file__ = f"<gradfix:{tag}:{path}>"
    if extra:
        mod.__dict__.update(extra)
    if package:
        mod.__package__ = package  # relative imports resolve against the real package
    sys.modules[name] = mod
    from .stale_imports import guard

    try:
        exec(compile(guard(tree, checked=True), path or "<gradfix>", "exec"), mod.__dict__)
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



def _sentence(s: str) -> str:
    return s if s.endswith(".") else s + "."

