"""The project's environment and the containment of one check (worker side; stdlib only).

Everything here runs in the worker or in the forked child of one check, so whatever it
changes (sys.path, sys.meta_path, the working directory, resource limits) ends with the child.

- `import_paths`: where the checked file's own modules come from: explicit roots (`--root`),
  the top of the file's package (`__init__.py` chain), the file's folder, `<project>/src`, the
  project root.
- `LocalFinder`: modules found under those roots (not in a site-packages) are loaded with the
  same top-level filtering as the checked file (imports, definitions and constants only).
- `StubFinder`: a module-level import of a package that is not installed becomes a stub that
  raises only when the unit touches it; the verdict lists the stubs, and a touched one makes it
  `untestable` with the package's name.
- `enter_check`: scratch working directory, memory/CPU/file-size limits (setrlimit).
- `isolate_network`: a network namespace for the worker where the platform allows it.
- `classify_limit`: turns an allocation failure or a limit signal into "hit the ... limit".
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import json
import os
import signal
import sys
import types

from . import budget
from . import source as S
from . import stub_fallback
from .folder_packages import NOTES as FOLDER_NOTES, folder_package_spec

CONFIG_ENV = "GRADFIX_VERIFY_CONFIG"


def config() -> dict:
    try:
        return json.loads(os.environ.get(CONFIG_ENV) or "{}")
    except ValueError:
        return {}


# --------------------------------------------------------------------------- project paths


def package_root(path: str) -> tuple[str, str]:
    """(folder to put on sys.path, dotted package of the file) from the `__init__.py` chain."""
    d = os.path.dirname(os.path.abspath(path))
    parts: list[str] = []
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.basename(d).isidentifier():
        parts.insert(0, os.path.basename(d))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d, ".".join(parts)


def import_paths(path: str | None, project_root: str | None, roots: list[str]) -> list[str]:
    out: list[str] = []

    def add(p: str | None) -> None:
        if p and os.path.isdir(p):
            p = os.path.abspath(p)
            if p not in out:
                out.append(p)

    for r in roots:
        add(r)
    if path and not path.startswith("<"):
        top, pkg = package_root(path)
        add(top)
        add(os.path.dirname(os.path.abspath(path)))  # plain sibling imports (`import utils`)
    if project_root:
        add(os.path.join(project_root, "src"))
        add(project_root)
    return out


def fixture_dirs(path: str | None, project_root: str | None) -> list[str]:
    """Where gradfix_fixtures.py is looked for: the file's folder and each one above it, up to the
    project root (only the root when the file lies outside it)."""
    root = os.path.abspath(project_root) if project_root else None
    if not path or path.startswith("<"):
        return [root] if root else []
    d = os.path.dirname(os.path.abspath(path))
    if root is None:
        return [d]
    if os.path.commonpath([d, root]) != root:
        return [root]
    out = [d]
    while d != root:
        d = os.path.dirname(d)
        out.append(d)
    return out


def explain_fixture_places(result: dict, path: str | None, project_root: str | None) -> dict:
    """Say where fixtures were looked for when the verdict asks for one."""
    detail = result.get("detail") or ""
    if result.get("verdict") != "untestable" or "gradfix_fixtures.py" not in detail:
        return result
    root = os.path.abspath(project_root) if project_root else None
    shown = [(os.path.relpath(d, root) if root else d) for d in fixture_dirs(path, project_root)]
    shown = ["the project root" if s == "." else s + "/" for s in shown]
    return {**result, "detail": f"{detail.rstrip('.')} (gradfix_fixtures.py is looked for in {', '.join(shown)}; "
                                f"the nearest that defines the fixture wins)"}


# --------------------------------------------------------------------------- stubs


class StubTouched(RuntimeError):
    pass


TOUCHED: list[str] = []  # "pkg (pkg.attr)" for each stub the check touched
STUBBED: set[str] = set()  # top-level packages replaced by a stub
STUBBABLE: set[str] = set()  # top-level packages imported unguarded at module level
STUB_CAUSE: dict[str, str] = {}  # submodule of an installed package, stubbed -> the missing package (stub_fallback)


def _touch(name: str, how: str):
    pkg = next((m for sub, m in STUB_CAUSE.items() if name == sub or name.startswith(sub + ".")), None) or \
        next((m for m in UNPARSABLE if name.startswith(m + ".")), None) or name.split(".")[0]
    entry = f"{pkg} ({name})"
    if entry not in TOUCHED:
        TOUCHED.append(entry)
    raise StubTouched(f"{name} is a gradfix stub: {pkg} is not installed in the verifier's interpreter ({how})")


class Stub:
    """Stands in for anything read from a missing package; any use raises StubTouched."""

    __slots__ = ("_gf_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_gf_name", name)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self._gf_name}.{attr}")

    def __repr__(self) -> str:
        return f"<gradfix stub {self._gf_name}>"

    def __mro_entries__(self, bases):
        _touch(self._gf_name, "subclassed")


def _make_raiser(op: str):
    def method(self, *a, **k):
        _touch(object.__getattribute__(self, "_gf_name"), op)

    return method


for _op in ("__call__", "__iter__", "__len__", "__bool__", "__getitem__", "__setitem__", "__contains__", "__enter__",
            "__exit__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
            "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__", "__neg__", "__float__", "__int__", "__index__",
            "__lt__", "__le__", "__gt__", "__ge__", "__setattr__", "__instancecheck__", "__subclasscheck__",
            "__await__"):
    setattr(Stub, _op, _make_raiser(_op.strip("_")))


class StubModule(types.ModuleType):
    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self.__name__}.{attr}")


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        mod = StubModule(spec.name)
        mod.__path__ = []  # a package, so that `import pkg.sub` finds a stub as well
        return mod

    def exec_module(self, module) -> None:
        STUBBED.add(module.__name__.split(".")[0])


class StubFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: reached only for modules nothing else can import."""

    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in STUBBABLE:
            return None
        if top in sys.modules and not isinstance(sys.modules[top], StubModule):
            return None  # a real package (the project's own) that lacks this submodule: a real ImportError
        return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)


def unguarded_imports(tree: ast.Module) -> set[str]:
    """Top-level packages imported at module level outside any try (a try/except ImportError is a fallback)."""
    out: set[str] = set()

    def visit(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.Import):
                out.update(a.name.split(".")[0] for a in s.names)
            elif isinstance(s, ast.ImportFrom) and not s.level and s.module:
                out.add(s.module.split(".")[0])
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)

    visit(tree.body)
    return out


# --------------------------------------------------------------------------- local modules

DROPPED: dict[str, set[str]] = {}  # module name -> names only its skipped top-level code binds
UNPARSABLE: dict[str, str] = {}  # project module that does not parse -> its SyntaxError
# the code of such a module: every name read from it is a stub (PEP 562 module __getattr__)
_UNPARSABLE_STUB = (
    "from gradfix.verify.sandbox import Stub as _GfStub\n"
    "def __getattr__(attr):\n"
    "    if attr.startswith('__') and attr.endswith('__'):\n"
    "        raise AttributeError(attr)\n"
    "    return _GfStub({name!r} + '.' + attr)\n"
)
LOCAL_LOADED: list[str] = []


def _is_env_path(p: str) -> bool:
    parts = p.replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


class _StrippedLoader(importlib.machinery.SourceFileLoader):
    """Loads a project module as the checked file is loaded: imports, definitions and constants only.
    Never writes bytecode (the cache would hold the stripped code)."""

    def get_code(self, fullname):
        data = self.get_data(self.path)
        try:
            tree = ast.parse(data, self.path)
        except SyntaxError as e:
            # a project module that does not parse (merge-conflict markers, Python 2): a stub module whose names
            # raise only when the unit uses them, as for a package that is not installed
            UNPARSABLE[fullname] = f"SyntaxError: {e.msg} ({os.path.basename(self.path)}, line {e.lineno})"
            STUBBED.add(fullname)
            return compile(_UNPARSABLE_STUB.format(name=fullname), self.path, "exec", dont_inherit=True)
        STUBBABLE.update(unguarded_imports(tree))
        stub_fallback.watch(tree)
        stripped = S.strip_module(tree)
        if stripped.dropped_count:
            DROPPED[fullname] = stripped.dropped_names
        LOCAL_LOADED.append(fullname)
        from .stale_imports import guard  # a project import its own source cannot satisfy: a stub (stale_imports.py)

        return compile(guard(stripped.tree), self.path, "exec", dont_inherit=True)


class LocalFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: a module found under the project's roots gets the stripped loader."""

    def __init__(self, roots: list[str], exclude: list[str]) -> None:
        self.roots = [os.path.realpath(r) + os.sep for r in roots]
        self.exclude = [os.path.realpath(e) + os.sep for e in exclude if e]

    def _local(self, origin: str) -> bool:
        p = os.path.realpath(origin)
        if _is_env_path(p) or any(p.startswith(e) for e in self.exclude):
            return False
        return any(p.startswith(r) for r in self.roots)

    def find_spec(self, name, path=None, target=None):
        folder = folder_package_spec(name, path, [r.rstrip(os.sep) for r in self.roots], self._local)
        if folder is not None:
            return folder
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not spec.origin or not spec.origin.endswith(".py") or not self._local(spec.origin):
            return None
        spec.loader = _StrippedLoader(name, spec.origin)
        return spec


def install_import_hooks(paths: list[str], sources: list[str]) -> None:
    exclude = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), sys.prefix, sys.base_prefix]
    exclude += [p for p in sys.path if _is_env_path(p)]
    for src in sources:
        try:
            STUBBABLE.update(unguarded_imports(ast.parse(src)))
        except SyntaxError:
            pass
    STUBBABLE.difference_update({"torch", "gradfix", "__future__"} | set(sys.builtin_module_names))
    STUBBABLE.difference_update(getattr(sys, "stdlib_module_names", ()))
    sys.meta_path.insert(0, LocalFinder(paths, exclude))
    stub_fallback.install(sources)  # right after LocalFinder
    sys.meta_path.append(StubFinder())


def explain_stubs(result: dict, interpreter: str) -> dict:
    """A touched stub makes the verdict untestable; untouched ones are listed in the detail."""
    broken = [t for t in TOUCHED if t.split(" ")[0] in UNPARSABLE]
    if broken:
        mods = sorted({t.split(" ")[0] for t in broken})
        return {**result, "verdict": "untestable", "detail": (
            f"the unit uses {', '.join(broken)}, a module of the project that does not parse: "
            f"{'; '.join(UNPARSABLE[m] for m in mods)}")}
    from .stale_imports import touched as stale_touched

    stale = stale_touched(TOUCHED)
    if stale:
        return {**result, "verdict": "untestable", "detail": (
            "the unit uses " + "; ".join(f"{name}, a stub standing in for an import that fails ({why})"
                                         for name, why in stale))}
    if TOUCHED:
        pkgs = sorted({t.split(" ")[0] for t in TOUCHED})
        return {**result, "verdict": "untestable", "detail": (
            f"the unit uses {', '.join(TOUCHED)}, which is not installed in {interpreter}; install "
            f"{' and '.join(pkgs)} there, or point --python at the project's environment (or, for a module of "
            f"the project, add its folder with --root)")}
    if STUBBED:
        detail = result.get("detail") or ""
        detail = detail.rstrip()
        if detail and not detail.endswith("."):
            detail += "."
        shown = [f"{m} (does not parse)" if m in UNPARSABLE else m for m in sorted(STUBBED)]
        result = {**result, "detail": f"{detail} Stubbed imports the unit does not use: {', '.join(shown)}."}
    dropped_name = _dropped_import(result.get("detail") or "")
    if dropped_name and result.get("verdict") == "untestable":
        name, mod = dropped_name
        result = {**result, "detail": (
            f"{result['detail']} ('{name}' is set by module-level code of {mod} that the verifier does not execute: "
            f"only imports, definitions and constants run)")}
    return result


def _dropped_import(detail: str) -> tuple[str, str] | None:
    import re

    m = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", detail)
    if m and m.group(1) in DROPPED.get(m.group(2), set()):
        return m.group(1), m.group(2)
    return None


# --------------------------------------------------------------------------- limits

ALLOC_SIGNS = ("can't allocate memory", "not enough memory", "Cannot allocate memory", "MemoryError", "bad_alloc",
               "out of memory")


def _vm_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def set_limits(memory_mb: int | None, cpu_s: float | None, file_mb: int | None) -> list[str]:
    """setrlimit in the check's process; returns what could not be enforced."""
    missing: list[str] = []
    try:
        import resource
    except ImportError:
        return ["memory", "cpu", "file size"]

    def lim(which: int, value: int, what: str, hard_too: bool = False) -> None:
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            if hard_too:  # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL a second later if that is ignored
                hard = value + 1 if hard == resource.RLIM_INFINITY else min(hard, value + 1)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):
            missing.append(what)

    if memory_mb:
        base = _vm_bytes()
        if base is None or sys.platform == "darwin":  # macOS does not enforce RLIMIT_AS
            missing.append("memory")
        else:
            lim(resource.RLIMIT_AS, base + int(memory_mb) * (1 << 20), "memory")
    if cpu_s:
        lim(resource.RLIMIT_CPU, budget.cpu_seconds(cpu_s), "cpu", hard_too=True)
    if file_mb:
        lim(resource.RLIMIT_FSIZE, int(file_mb) * (1 << 20), "file size")
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    return missing


def is_alloc_failure(text: str) -> bool:
    return any(s in text for s in ALLOC_SIGNS)


def classify_limit(result: dict, cfg: dict) -> dict:
    """An allocation refused under the memory limit is a limit hit, whatever the check made of it."""
    detail = result.get("detail") or ""
    if cfg.get("memory_mb") and is_alloc_failure(detail) and result.get("verdict") in ("untestable", "failed"):
        return {**result, "verdict": "untestable", "detail": (
            f"the check hit the memory limit ({cfg['memory_mb']} MB per check; --memory-limit raises it): an "
            f"allocation was refused ({_first_alloc(detail)})")}
    return result


def classify_file_limit(result: dict, cfg: dict) -> dict:
    """Python ignores SIGXFSZ: a write past the file-size limit fails with EFBIG instead."""
    detail = result.get("detail") or ""
    if cfg.get("file_mb") and "File too large" in detail and result.get("verdict") in ("untestable", "failed"):
        return {**result, "verdict": "untestable", "detail": (
            f"the check hit the file-size limit ({cfg['file_mb']} MB per file written): {detail}")}
    return result


def _first_alloc(detail: str) -> str:
    for s in ALLOC_SIGNS:
        i = detail.find(s)
        if i >= 0:
            j = detail.find(")", i)
            return detail[max(0, i - 40): j if j > 0 else i + 120].strip(" ;:(")
    return detail[:120]


def describe_signal(sig: int, cfg: dict, cpu_used: float | None = None) -> str | None:
    cpu_s = cfg.get("cpu_s")
    hit_cpu = sig == getattr(signal, "SIGXCPU", None) or (
        sig == signal.SIGKILL and cpu_s and cpu_used is not None and cpu_used >= budget.cpu_seconds(cpu_s) - 0.05)
    if hit_cpu:
        return (f"the check hit the CPU limit ({cpu_s:g} s of CPU time, the check's own, whatever the machine's "
                f"load; --timeout or --cpu-limit raises it, or define a smaller fixture in gradfix_fixtures.py)")
    if sig == getattr(signal, "SIGXFSZ", None):
        return f"the check hit the file-size limit ({cfg.get('file_mb')} MB per file written)"
    if sig == signal.SIGKILL:
        return ("the check process was killed by SIGKILL from outside the verifier (usually the system's out-of-memory "
                "killer: the check ran out of memory)")
    return None


# --------------------------------------------------------------------------- network

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


def isolate_network() -> str:
    """Move this (single-threaded) process into a new network namespace: no interface but a down
    loopback, so connect() and DNS fail. Returns a description for the hello message."""
    if not sys.platform.startswith("linux"):
        return f"not blocked (no network namespaces on {sys.platform})"
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception as e:  # noqa: BLE001
        return f"not blocked (libc not available: {e})"
    if libc.unshare(CLONE_NEWNET) == 0:
        return "blocked (own network namespace)"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                           ("/proc/self/gid_map", f"{gid} {gid} 1")):
            try:
                with open(path, "w") as f:
                    f.write(text)
            except OSError:
                pass
        return "blocked (own user and network namespace)"
    err = ctypes.get_errno()
    return f"not blocked (unshare is not permitted here: {os.strerror(err)})"


# --------------------------------------------------------------------------- one check


def contained(run, cfg: dict):
    """Wrap `run(data) -> result` for use in the forked child of one check: resolve the request's
    paths against the engine's working directory, put the project's import roots on sys.path,
    install the import hooks, and turn stubs and limit hits into what the verdict says."""

    def run_contained(data: dict) -> dict:
        data = dict(data)
        cwd = cfg.get("cwd") or os.getcwd()
        for key in ("path", "project_root"):
            p = data.get(key)
            if p and not str(p).startswith("<"):
                data[key] = os.path.normpath(os.path.join(cwd, p))
        paths = import_paths(data.get("path"), data.get("project_root"), list(cfg.get("roots") or []))
        sys.path[:0] = [p for p in paths if p not in sys.path]
        # only the original's imports may be stubbed: a rewrite that adds an import of a missing package is broken
        install_import_hooks(paths, [data.get("original") or ""])
        from .stale_imports import set_original

        set_original(data.get("original") or "")
        try:
            result = run(data)
        except BaseException as e:  # noqa: BLE001 - SystemExit from user code included
            result = {"verdict": "untestable", "detail": f"the check was aborted: user code raised "
                      f"{type(e).__name__}: {e}"[:300], "unit": None}
        result = classify_file_limit(classify_limit(result, cfg), cfg)
        result = explain_fixture_places(result, data.get("path"), data.get("project_root"))
        result = explain_stubs(result, sys.executable)
        if FOLDER_NOTES:
            detail = (result.get("detail") or "").rstrip()
            sep = " " if not detail or detail.endswith(".") else ". "
            result = {**result, "detail": f"{detail}{sep}{'; '.join(FOLDER_NOTES)}.".lstrip()}
        return result

    return run_contained
