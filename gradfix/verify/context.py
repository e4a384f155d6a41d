"""The request context a check runs in: the two loaded versions, fixtures, precision."""
from __future__ import annotations

import ast
import re
import importlib.util
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import pure_methods as PM
from . import changes as CH
from .api import VerifyRequest
from .coverage import HIT, instrument
from .folder_packages import project_import_hint
from .runtime import (
    FIXTURE_FILE, TOL64, SEED_BUILD, Outcome, Untestable, FailedCheck, REDIRECT_NOTE, exec_module, fmt_exc,
    NAMESPACE_PREFIX, is_gpu_error, package_of, seeded, _sentence,
)


def fixture_hint(name: str, what: str = "module") -> str:
    return f"define fixture_{name}(mod) in {FIXTURE_FILE} returning ({what}, inputs)"


# --------------------------------------------------------------------------- the request context


@dataclass
class Ctx:
    req: VerifyRequest
    analysis: CH.Analysis
    stripped: dict  # tag -> source.Stripped
    redirect: bool = False
    dtype: torch.dtype = torch.float64
    tol: float = TOL64
    weak_units: list = field(default_factory=list)
    _mods: dict = field(default_factory=dict)
    _fixtures: Any = None
    _fixtures_loaded: bool = False
    coverage: Any = None  # coverage.Hits: which changed statements ran
    required: dict = field(default_factory=dict)  # tag -> changed statements that must run
    _instrumented: dict = field(default_factory=dict)  # tag -> the stripped tree with coverage markers
    built_from: dict = field(default_factory=dict)  # unit -> call_sites.CallSite its constructor arguments came from
    config_plans: dict = field(default_factory=dict)  # unit -> configs.Plan its constructor arguments came from
    observed: dict = field(default_factory=dict)  # unit -> observed.Observed: arguments recorded in its holder
    input_notes: dict = field(default_factory=dict)  # unit -> what its synthesised input is (a batch dict)
    notes: list = field(default_factory=list)  # sentences a definitive verdict's detail ends with (call_sites.py)
    env_reasons: dict = field(default_factory=dict)  # module-level name -> why its environment was not made
    _pkg: tuple | None = None  # (the package relative imports resolve against,), once worked out

    def uncovered(self) -> list:
        """(tag, statement) of each changed statement that has not run yet."""
        if self.coverage is None or not self.required:
            return []
        return self.coverage.missing(self.required)

    def module(self, tag: str) -> types.ModuleType:
        if tag not in self._mods:
            self._mods[tag] = self.load_fresh(tag)
        return self._mods[tag]

    def load_fresh(self, tag: str) -> types.ModuleType:
        if tag == "new":
            self.module("old")  # a failure to load the original is untestable, not a failure of the rewrite
        try:
            with seeded(SEED_BUILD):
                tree = self.stripped[tag].tree
                extra = None
                if self.coverage is not None and self.required.get(tag):
                    if tag not in self._instrumented:
                        self._instrumented[tag] = instrument(tree, self.required[tag])
                    tree = self._instrumented[tag]
                    extra = {HIT: self.coverage.recorder(tag)}
                mod = exec_module(tree, tag, self.req.path, self._package(), extra)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            if tag == "new":
                self._second_load_of_original(e)
                raise FailedCheck(f"new version raises {fmt_exc(e)} when the rewritten module is loaded")
            which = "original" if tag == "old" else "rewritten"
            hint = ""
            if isinstance(e, ImportError) and "relative import" in str(e):
                hint = ("; relative imports need the file's package: an __init__.py in its folder (and in each package "
                        "folder above it), or the project root above it")
            if is_gpu_error(e):
                raise Untestable(f"needs GPU: loading the {which} module raises {fmt_exc(e)}")
            if not hint and isinstance(e, ImportError):
                hint = project_import_hint(e, self.req.project_root)
            if not hint and isinstance(e, ImportError):
                missing = getattr(e, "name", None) or ""
                if missing.split(".")[0] in ("triton", "cupy", "pycuda", "apex"):
                    raise Untestable(f"needs GPU: the {which} module imports {missing}, which is not available here")
                hint = (
                    "; install the missing package where the verifier runs, or pass the project root so that "
                    "local modules resolve"
                )
            raised = fmt_exc(e)
            shown = re.sub(NAMESPACE_PREFIX + r"[0-9a-f]+\.?", "", raised)  # our namespace package's name
            if shown != raised:
                hint = ("; the relative import reaches above the file's package, whose folders were taken as "
                        "namespace packages: the module it names is not in the project")
            raise Untestable(f"module not importable in isolation: {shown} (loading the {which} file){hint}")
        self._bind_envs(tag, mod)
        return mod

    def _package(self) -> str | None:
        """The package the checked file's relative imports resolve against; when they reach above its
        `__init__.py` chain, the folders above taken as namespace packages (runtime.namespace_above), said in
        the verdict's detail. Worked out once per check."""
        if self._pkg is not None:
            return self._pkg[0]
        levels = max((n.level for n in ast.walk(self.analysis.old_tree) if isinstance(n, ast.ImportFrom)), default=0)
        pkg = package_of(self.req.path, self.req.project_root, levels)
        self._pkg = (pkg,)
        if pkg and pkg.startswith(NAMESPACE_PREFIX):
            note = (f"The file's `from {'.' * levels}` import reaches above its package's `__init__.py` chain: the "
                    f"project folders above it were taken as namespace packages, as when the checkout is imported "
                    f"from a folder above them.")
            if note not in self.notes:
                self.notes.append(note)
        return pkg

    def _bind_envs(self, tag: str, mod: types.ModuleType) -> None:
        """Module-level `env = gym.make(...)` and the constants derived from it, which the loader dropped, made in
        the worker (module_envs.py); why one could not be is kept for the NameError's explanation."""
        tree = self.analysis.old_tree if tag == "old" else self.analysis.new_tree
        if not any(isinstance(n, ast.Import) and any(a.name in ("gym", "gymnasium") for a in n.names)
                   for n in ast.walk(tree)):
            return
        from .module_envs import bind_module_envs

        made, reasons = bind_module_envs(tree, mod, self.stripped[tag].dropped_names,
                                         os.path.basename(self.req.path or "this file"))
        for note in made:
            note = _sentence(note)
            if note not in self.notes:
                self.notes.append(note)
        for name, why in reasons.items():
            self.env_reasons.setdefault(name, why)

    def _second_load_of_original(self, err: BaseException) -> None:
        """The rewrite is loaded after the original, in the same process. A file that registers itself at load
        (`@register_model("name")`, a registry that refuses duplicates) raises then whatever the rewrite changed:
        if the original raises too when loaded a second time, the failure says nothing about the rewrite."""
        try:
            with seeded(SEED_BUILD):
                exec_module(self.stripped["old"].tree, "old", self.req.path, self._package())
        except BaseException as again:  # noqa: BLE001
            if isinstance(again, KeyboardInterrupt):
                raise
            raise Untestable(
                f"the file cannot be loaded twice in one process: loading the original a second time raises "
                f"{fmt_exc(again)} (module-level state such as a registry), so the rewrite ({fmt_exc(err)} when "
                f"loaded after it) could not be compared with it"
            ) from None

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
        why = self._explain(e, unit)
        plan = self.config_plans.get(unit)
        return why + (f" ({unit} built with {plan.text})" if plan is not None else "")

    def _explain(self, e: BaseException, unit: str) -> str:
        if isinstance(e, NameError):
            name = getattr(e, "name", None)
            dropped = set()
            for s in self.stripped.values():
                dropped |= s.dropped_names
            if name and name in self.env_reasons:
                return (f"{unit} uses the module-level name '{name}', set from an environment the verifier could not "
                        f"make: {self.env_reasons[name]}")
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
        for unit, site in self.built_from.items():
            detail = _sentence(detail) + f" {unit} built as `{site.text}` (the call at {site.place})."
        for unit, plan in self.config_plans.items():
            detail = _sentence(detail) + f" {unit} built with {plan.text}."
        for unit, note in self.input_notes.items():
            detail = _sentence(detail) + f" Input of {unit}: {note}."
        for note in self.notes:
            detail = _sentence(detail) + " " + note
        note = PM.note(self.stripped.get("old"))
        if note:
            detail = _sentence(detail) + " " + note
        if self.weak_units:
            detail = _sentence(detail) + " Weak check: fp32 with tolerance 1e-4, because the code does not run in fp64."
        if self.redirect:
            if detail.endswith(".") and not detail.endswith(".."):
                detail = detail[:-1]
            detail += f" ({REDIRECT_NOTE})."
        return Outcome(o.verdict, detail, o.unit)


