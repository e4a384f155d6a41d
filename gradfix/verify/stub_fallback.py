"""Stubs for a submodule of an installed package whose own import needs a package that is not installed.

`from torch.utils.tensorboard import SummaryWriter` fails without tensorboard: torch is installed, so the stubs of
missing packages (sandbox.StubFinder, reached only for modules nothing else can import) never apply, and the whole
file was `untestable` though its units may never write a log. Here, a module the project imports at module level
outside any try, whose top-level package is installed, is imported for real; when that raises ModuleNotFoundError for
another top-level package that is not installed either, the module becomes a stub (sandbox.StubModule): any use of
what it provides raises StubTouched, and the verdict is `untestable` naming the missing package, as for any stub.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import sys

from . import sandbox

WATCHED: set[str] = set()  # dotted modules imported unguarded at module level by the checked file or the project


def unguarded_modules(tree: ast.Module) -> set[str]:
    """Dotted modules (`a.b.c`) imported at module level outside any try."""
    out: set[str] = set()

    def visit(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.Import):
                out.update(a.name for a in s.names if "." in a.name)
            elif isinstance(s, ast.ImportFrom) and not s.level and s.module and "." in s.module:
                out.add(s.module)
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)

    visit(tree.body)
    return out


def watch(tree: ast.Module) -> None:
    WATCHED.update(unguarded_modules(tree))


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
