"""Where and how the verifier's workers run (engine side; stdlib only, no torch).

- `resolve_python` picks the project's interpreter: `--python`, `[tool.gradfix] python`, an
  active `VIRTUAL_ENV`, a `.venv`/`venv` at the project root, else gradfix's own.
- `Containment` holds the limits a check runs under (memory, CPU, network, file size).
- `worker_command` / `worker_env` start `gradfix.verify.worker` in that interpreter without
  gradfix installed there: a private folder of links to gradfix's own package (and libcst,
  which the loop checks parse with) goes first on the worker's sys.path, and the
  environment is reduced to what torch needs, with HOME, TMPDIR and caches in a scratch folder.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, field

_GRADFIX_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../gradfix

DEFAULT_MEMORY_MB = 4096


class EnvironmentError_(ValueError):
    """A configured interpreter or root that does not exist (a usage error)."""


@dataclass(frozen=True)
class Interpreter:
    path: str  # absolute path of the python executable
    how: str  # where it came from, for the verdict detail

    @property
    def is_own(self) -> bool:
        return _same_file(self.path, sys.executable)

    def describe(self) -> str:
        return f"{self.path} ({self.how})"


def _same_file(a: str, b: str) -> bool:
    """The same interpreter *path*: a venv's python is a link to its base, but its own environment."""
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _venv_python(venv: str) -> str | None:
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
        p = os.path.join(venv, rel)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _explicit(path: str, base: str | None, what: str) -> str:
    p = os.path.expanduser(path)
    if base and not os.path.isabs(p):
        p = os.path.join(base, p)
    p = os.path.abspath(p)
    if os.path.isdir(p):  # a virtual environment's folder
        found = _venv_python(p)
        if found is None:
            raise EnvironmentError_(f"{what}: {path!r} is a folder without bin/python")
        return found
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        found = shutil.which(path) if os.sep not in path else None
        if found is None:
            raise EnvironmentError_(f"{what}: {path!r} is not an executable python interpreter")
        return os.path.abspath(found)
    return p


def resolve_python(option: str | None = None, configured: str | None = None, config_dir: str | None = None,
                   project_root: str | None = None, environ: dict | None = None) -> Interpreter:
    """The interpreter the checks run in, in the documented order of precedence."""
    env = os.environ if environ is None else environ
    if option:
        return Interpreter(_explicit(option, os.getcwd(), "--python"), "--python")
    if configured:
        return Interpreter(_explicit(configured, config_dir, "[tool.gradfix] python"), "[tool.gradfix] python")
    venv = env.get("VIRTUAL_ENV")
    if venv:
        found = _venv_python(venv)
        if found is not None:
            return Interpreter(os.path.abspath(found), "active VIRTUAL_ENV")
    if project_root:
        for name in (".venv", "venv"):
            d = os.path.join(project_root, name)
            if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
                found = _venv_python(d)
                if found is not None:
                    return Interpreter(os.path.abspath(found), f"the project's {name}")
    return Interpreter(sys.executable, "gradfix's own interpreter")


def resolve_roots(values: list[str] | tuple[str, ...], base: str | None, what: str) -> list[str]:
    out = []
    for v in values:
        p = os.path.abspath(os.path.join(base or os.getcwd(), os.path.expanduser(v)))
        if not os.path.isdir(p):
            raise EnvironmentError_(f"{what}: {v!r} is not a folder")
        out.append(p)
    return out


@dataclass
class Containment:
    """Limits for each check (see the README's "Containment")."""

    memory_mb: int | None = DEFAULT_MEMORY_MB  # address space a check may add; None: unlimited
    cpu_s: float | None = None  # CPU seconds per check; None: the per-check timeout
    wall_s: float | None = None  # wall-clock backstop per check; None: budget.wall_backstop of the CPU budget
    file_mb: int | None = 256  # largest file a check may write
    network: bool = False  # False: run the workers in their own network namespace where possible
    roots: list[str] = field(default_factory=list)  # extra import roots (--root)

    def to_json(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- starting a worker

# Variables torch (and the C libraries under it) read; everything else is dropped.
_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT", "PYTHONPATH",
         "PYTHONHASHSEED", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "ROCM_PATH", "KMP_DUPLICATE_LIB_OK")
_KEEP_PREFIX = ("LC_", "GRADFIX_VERIFY_", "NVIDIA_")


def worker_env(scratch: str, config: dict, environ: dict | None = None) -> dict:
    env = os.environ if environ is None else environ
    out = {k: v for k, v in env.items() if k in _KEEP or k.startswith(_KEEP_PREFIX)}
    out.setdefault("PATH", os.defpath)
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    out.update({
        "HOME": home, "TMPDIR": scratch, "TEMP": scratch, "TMP": scratch,
        "XDG_CACHE_HOME": os.path.join(home, ".cache"), "TORCH_HOME": os.path.join(home, ".cache", "torch"),
        "MPLCONFIGDIR": os.path.join(home, ".mpl"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": env.get("MKL_NUM_THREADS", "1"),
        "GRADFIX_VERIFY_CONFIG": _json(config),
    })
    return out


def _json(obj: dict) -> str:
    import json

    return json.dumps(obj)


def _module_dir(name: str) -> str | None:
    """The folder (or single file) that provides top-level module `name` in gradfix's own environment."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    return spec.origin


def make_shim(scratch: str, foreign: bool) -> tuple[str, str | None]:
    """Folders for the worker's sys.path: (front, back).

    front holds a link to gradfix's package (and, for another interpreter, libcst); back holds the
    pure-Python libraries those need, searched after the project's own.
    """
    front = os.path.join(scratch, "shim")
    os.makedirs(front, exist_ok=True)
    _link(_GRADFIX_PKG, os.path.join(front, "gradfix"))
    if not foreign:
        return front, None
    back = os.path.join(scratch, "shim-deps")
    os.makedirs(back, exist_ok=True)
    for name, where in (("libcst", front), ("typing_extensions", back), ("yaml", back)):
        src = _module_dir(name)
        if src:
            _link(src, os.path.join(where, os.path.basename(src)))
    return front, back


def _link(src: str, dst: str) -> None:
    if os.path.lexists(dst):
        return
    try:
        os.symlink(src, dst)
    except OSError:  # no symlinks (some Windows setups): copy instead
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)


def worker_command(python: str, front: str, back: str | None) -> list[str]:
    boot = (
        "import sys; sys.path.insert(0, {front!r}); {back}"
        "import runpy; runpy.run_module('gradfix.verify.worker', run_name='__main__', alter_sys=True)"
    ).format(front=front, back=f"sys.path.append({back!r}); " if back else "")
    return [python, "-c", boot]


def new_scratch() -> str:
    return tempfile.mkdtemp(prefix="gradfix-verify-")
