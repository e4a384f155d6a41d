"""Stubs for a submodule of an installed package whose own import needs a package that is not installed.

`from torch.utils.tensorboard import SummaryWriter` fails without tensorboard: torch is installed, so the stubs of
missing packages (sandbox.StubFinder, reached only for modules nothing else can import) never apply, and the whole
file was `untestable` though its units may never write a log. Here, a module the project imports at module level
outside any try, whose top-level package is installed, is imported for real; when that raises ModuleNotFoundError for
another top-level package that is not installed either, the module becomes a stub (sandbox.StubModule): any use of
what it provides raises StubTouched, and the verdict is `untestable` naming the missing package, as for any stub.
Likewise a name imported from such a module that its installed version lacks (`from skimage.measure import
compare_ssim`, gone from current scikit-image) becomes a stub.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import sys

from . import sandbox

WATCHED: set[str] = set()  # dotted modules imported unguarded at module level by the checked file or the project
NAMES: dict[str, set[str]] = {}  # watched module -> the names imported from it (`from a.b import name`)


def unguarded_modules(tree: ast.Module) -> set[str]:
    """Dotted modules (`a.b.c`) imported at module level outside any try."""
    out: set[str] = set()

    def visit(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.Import):
                out.update(a.name for a in s.names if "." in a.name)
            elif isinstance(s, ast.ImportFrom) and not s.level and s.module and "." in s.module:
                out.add(s.module)
                NAMES.setdefault(s.module, set()).update(a.name for a in s.names if a.name != "*")
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)

    visit(tree.body)
    return out


def watch(tree: ast.Module) -> None:
    mods = unguarded_modules(tree)
    WATCHED.update(mods)
    for name in mods:  # already imported (torch.nn.functional): the finder is not asked again
        m = sys.modules.get(name)
        if m is not None and not isinstance(m, sandbox.StubModule) and sandbox._is_env_path(getattr(m, "__file__", None) or ""):
            _stub_missing_names(m, name)


def _installed(top: str) -> bool:
    return top in sys.modules or importlib.machinery.PathFinder.find_spec(top) is not None


class _FallbackLoader(importlib.abc.Loader):
    def __init__(self, real: importlib.abc.Loader, name: str) -> None:
        self.real = real
        self.name = name

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            self.real.exec_module(module)
            _stub_missing_names(module, self.name)
        except ModuleNotFoundError as e:
            missing = (e.name or "").split(".")[0]
            if not missing or missing == self.name.split(".")[0] or _installed(missing):
                raise
            keep = {k: v for k, v in vars(module).items() if k in ("__name__", "__spec__", "__loader__", "__file__",
                                                                   "__package__", "__path__")}
            vars(module).clear()
            vars(module).update(keep)
            module.__class__ = sandbox.StubModule
            sandbox.STUBBED.add(missing)
            sandbox.STUB_CAUSE[self.name] = missing


def _stub_missing_names(module, name: str) -> None:
    """`from skimage.measure import compare_ssim` where the installed version no longer has it: the name becomes a
    stub (a use raises StubTouched), so the units that do not use it can still be checked."""
    for attr in sorted(NAMES.get(name, ())):
        if attr in vars(module):
            continue
        try:
            getattr(module, attr)  # a lazily loaded attribute, or a submodule
            continue
        except Exception:  # noqa: BLE001 - AttributeError, or the lazy loader's own error
            pass
        path = getattr(module, "__path__", None)
        if path and importlib.machinery.PathFinder.find_spec(f"{name}.{attr}", list(path)):
            continue
        setattr(module, attr, sandbox.Stub(f"{name}.{attr}"))
        sandbox.STUB_CAUSE[f"{name}.{attr}"] = name.split(".")[0]
        sandbox.STUBBED.add(f"{name}.{attr} (not in the installed {name.split('.')[0]})")


class FallbackFinder(importlib.abc.MetaPathFinder):
    """Before the path finder: the modules of WATCHED whose top-level package is installed get the fallback loader."""

    def find_spec(self, name, path=None, target=None):
        if name not in WATCHED or name.split(".")[0] in ("gradfix", "__future__"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not spec.origin or not sandbox._is_env_path(spec.origin):
            return None  # only installed packages: a project module failing to import is the project's own error
        spec.loader = _FallbackLoader(spec.loader, name)
        return spec


def install(sources: list[str]) -> None:
    for src in sources:
        try:
            watch(ast.parse(src))
        except SyntaxError:
            pass
    sys.meta_path.insert(1, FallbackFinder())
