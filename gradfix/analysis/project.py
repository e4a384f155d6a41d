"""Project-wide facts: the files of one run, what they import from each other, which of their
classes are `nn.Module`s, and where one file calls a function another defines.

A rule reads one file, but two facts it needs often live in another:
- whether `Net` (imported from `models.py`) is a module: `model.forward(x)` is a hazard for a
  module and a plain method call for a config object;
- whether a helper runs with grad enabled: `def postprocess(out): out.clamp_(0, 1)` in
  `utils.py` is harmless when every caller (in `eval.py`) runs it under `torch.no_grad()`.

Each file is summarised (summary.py) from CPython's `ast` (about 15x cheaper than libcst's tree), so the
index costs little to build for a whole repository and to refresh for one edited file (the
language server does that per change). Questions are answered by name resolution that gives up
when it is ambiguous: two files that could be `models.net` mean "unknown", and unknown keeps
the rules silent.
"""

from __future__ import annotations

import ast
import os

from gradfix.analysis.returns import Returned
from gradfix.analysis.summary import _MODULE_BASE, CallSite, FileSummary, autograd_or_module_base, package_of, summarise
from gradfix.analysis.torchapi import is_nn_module_ctor

def _hand_written(s: FileSummary, cls: str) -> bool:
    return f"{cls}.backward" in s.functions and not any(autograd_or_module_base(b) for b in s.classes[cls])


class ProjectIndex:
    """The summaries of a run's files, and the questions rules ask across files."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._files: dict[str, FileSummary] = {}
        self._by_name: dict[str, list[str]] | None = None
        self._sites: dict[str, list[tuple[str, CallSite]]] | None = None
        self._module_memo: dict[str, bool | None] = {}
        # per file: the files its imports name, and a digest of its summary (fingerprint's parts)
        self._direct: dict[str, list[str]] = {}
        self._digests: dict[str, bytes] = {}
        self._folders: set[str] = set()

    # -- building and updating ---------------------------------------------
    @classmethod
    def build(cls, files: dict[str, str], root: str) -> "ProjectIndex":
        """`files`: path -> source."""
        index = cls(root)
        for path, source in files.items():
            index.update(path, source)
        return index

    def update(self, path: str, source: str, tree: ast.Module | None = None) -> None:
        """(Re)summarise one file; cheap enough to run on each edit of an open document."""
        self.put(path, summarise(os.path.abspath(path), source, self.root, tree))

    def put(self, path: str, summary: FileSummary | None) -> None:
        """Store one file's summary made elsewhere (gradfix/prescan.py: in a worker, from the parse
        the pre-pass reads too); None: the file does not parse."""
        key = os.path.abspath(path)
        old = self._files.get(key)
        if summary is None:
            if old is None:
                return
            del self._files[key]
        else:
            if old is not None and (old.imports, old.classes, old.functions, old.stateless, old.sites,
                                    old.returned_facts()) == (
                    summary.imports, summary.classes, summary.functions, summary.stateless, summary.sites,
                    summary.returned_facts()):
                return
            self._files[key] = summary
        self._by_name = self._sites = None
        self._module_memo, self._direct, self._digests = {}, {}, {}

    def load_folder(self, folder: str, limit: int = 500) -> None:
        """Summarise the Python files of one folder from disk, once (the language server's way
        of learning a script's neighbours without walking the whole workspace)."""
        folder = os.path.abspath(folder)
        if folder in self._folders:
            return
        self._folders.add(folder)
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))[:limit]
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if path in self._files:
                continue
            try:
                with open(path, encoding="utf-8") as fh:
                    self.update(path, fh.read())
            except (OSError, UnicodeDecodeError, ValueError):
                continue

    def __len__(self) -> int:
        return len(self._files)

    def summary(self, path: str) -> FileSummary | None:
        return self._files.get(os.path.abspath(path))

    # -- name resolution -----------------------------------------------------
    def _names(self) -> dict[str, list[str]]:
        if self._by_name is None:
            table: dict[str, list[str]] = {}
            for path, s in self._files.items():
                for n in s.names:
                    table.setdefault(n, []).append(path)
            self._by_name = table
        return self._by_name

    def _module_file(self, dotted: str, near: str | None) -> str | None:
        """The file of module `dotted`; with several candidates, the one in the importing file's
        folder, else None (ambiguous)."""
        paths = self._names().get(dotted)
        if not paths:
            return None
        if len(paths) == 1:
            return paths[0]
        if near is not None:
            folder = os.path.dirname(os.path.abspath(near))
            local = [p for p in paths if os.path.dirname(p) == folder
                     or os.path.dirname(p) == os.path.join(folder, *dotted.split(".")[:-1])]
            if len(local) == 1:
                return local[0]
        return None

    def names_module(self, dotted: str) -> bool:
        """Whether `dotted` or a package above it may be a file of the project (`os.path`: a
        project `os.py` or `os/path.py`)."""
        parts = dotted.split(".")
        return any(self._names().get(".".join(parts[:k])) for k in range(1, len(parts) + 1))

    def resolve(self, qualname: str, near: str | None = None) -> tuple[FileSummary, str] | None:
        """The project file and top-level name a qualified name refers to: `models.net.Net` ->
        (summary of models/net.py, "Net"); re-exports through a package's `__init__` are followed.
        A method resolves too: `models.Net.sample` -> (models/net.py, "Net.sample")."""
        hit = self._resolve(qualname, near)
        if hit is None and "." in qualname:
            owner, _, meth = qualname.rpartition(".")
            cls = self._resolve(owner, near)
            if cls is not None and cls[1] in cls[0].classes and f"{cls[1]}.{meth}" in cls[0].functions:
                return cls[0], f"{cls[1]}.{meth}"
        return hit

    def _resolve(self, qualname: str, near: str | None) -> tuple[FileSummary, str] | None:
        seen: set[str] = set()
        while qualname not in seen:
            seen.add(qualname)
            module, _, name = qualname.rpartition(".")
            if not module:
                return None
            path = self._module_file(module, near)
            if path is None:
                return None
            s = self._files[path]
            if name in s.classes or name in s.functions:
                return s, name
            forwarded = s.imports.get(name)
            if forwarded is None:
                return None
            qualname, near = forwarded, path
        return None

    def is_module_class(self, qualname: str, near: str | None = None) -> bool | None:
        """True: a project class that subclasses nn.Module (through any chain of project classes);
        False: a project class that provably does not (every base resolved, none a module);
        None: not a project class, or a base the index cannot see."""
        hit = self.resolve(qualname, near)
        if hit is None:
            return None
        s, name = hit
        if name not in s.classes:
            return False if name in s.functions else None
        key = f"{s.path}:{name}"
        if key in self._module_memo:
            return self._module_memo[key]
        self._module_memo[key] = None  # a cycle of bases: unknown
        answer: bool | None = False
        for base in s.classes[name]:
            if base == _MODULE_BASE or is_nn_module_ctor(base):
                answer = True
                break
            if base in s.classes:  # a class of the same file
                sub = self.is_module_class(f"{s.names[0]}.{base}", s.path) if s.names else None
            else:
                sub = self.is_module_class(base, s.path)
            if sub is True:
                answer = True
                break
            if sub is None and base not in ("object", "Exception", "dict", "list", "tuple", "NamedTuple",
                                             "typing.NamedTuple", "enum.Enum", "abc.ABC"):
                answer = None
        self._module_memo[key] = answer
        return answer

    def parameter_free(self, qualname: str, near: str | None = None, _seen=None) -> bool | None:
        """True: a project module class that neither it nor any base creates a parameter, buffer
        or submodule in (a dropout or pooling wrapper); False: one that may; None: unknown."""
        hit = self.resolve(qualname, near)
        if hit is None or hit[1] not in hit[0].classes:
            return None
        s, name = hit
        seen = _seen if _seen is not None else set()
        if (s.path, name) in seen:
            return None
        seen.add((s.path, name))
        if name not in s.stateless:
            return False
        for base in s.classes[name]:
            if base == _MODULE_BASE:
                continue
            full = f"{s.names[0]}.{base}" if base in s.classes and s.names else base
            sub = self.parameter_free(full, s.path, seen)
            if sub is not True:
                return sub
        return True if self.is_module_class(qualname, near) else None

    # -- what project functions and forwards return ----------------------------
    def _local(self, s: FileSummary, name: str) -> str:
        """A name as one file's summary records it, qualified: a class or function of that file
        gets the file's module name (`Net` in models.py -> `models.Net`)."""
        head = name.split(".")[0]
        if s.names and (head in s.classes or head in s.functions):
            return f"{s.names[0]}.{name}"
        return name

    def module_factory(self, qualname: str, near: str | None = None, _depth: int = 0) -> tuple[Returned, ...] | None:
        """What a project function returns when every path returns an nn.Module (a torch module, a
        project module class, or what another such function returns): one `Returned` per return,
        its ctor qualified, its head also taken from a project class's forward. None otherwise."""
        hit = self.resolve(qualname, near)
        if hit is None or _depth > 3:
            return None
        s, name = hit
        found = s.factories.get(name)
        if found is None:
            return None
        out = []
        for r in found:
            ctor = self._local(s, r.ctor)
            if is_nn_module_ctor(ctor):
                out.append(Returned(ctor, r.head))
            elif self.is_module_class(ctor, s.path) is True:
                out.append(Returned(ctor, r.head or self.forward_head(ctor, s.path)))
            else:
                inner = self.module_factory(ctor, s.path, _depth + 1)
                if inner is None:
                    return None
                heads = {i.head for i in inner}
                out.append(Returned(ctor, heads.pop() if len(heads) == 1 else None))
        return tuple(out)

    def forward_head(self, qualname: str, near: str | None = None) -> str | None:
        """"softmax" / "log_softmax" when a project module class's forward returns one (see
        analysis/returns.py for the forms), else None."""
        hit = self.resolve(qualname, near)
        if hit is None or hit[1] not in hit[0].classes or self.is_module_class(qualname, near) is not True:
            return None
        return hit[0].heads.get(hit[1])

    def forward_numbers(self, qualname: str, near: str | None = None) -> frozenset[int]:
        """The positions of the tuple a project module class's forward returns that hold Python numbers
        or lists of them (analysis/returns.py); empty when none is shown."""
        hit = self.resolve(qualname, near)
        if hit is None or hit[1] not in hit[0].classes or self.is_module_class(qualname, near) is not True:
            return frozenset()
        return frozenset(hit[0].numbers.get(hit[1], ()))

    def returns_number(self, qualname: str, near: str | None = None) -> bool:
        """Whether `qualname` is a top-level function of a project file whose every `return` gives a Python
        number (analysis/returns.py `number_functions`)."""
        hit = self.resolve(qualname, near)
        return hit is not None and hit[1] in hit[0].number_functions

    def forward_clears(self, qualname: str, near: str | None = None) -> bool:
        """A project module class whose forward clears its own gradients (`self.zero_grad()` in its body).
        A bare name (`rnn_crf`, not imported by name) is looked up in the modules `near` imports with
        `from m import *`, when exactly one of them defines it."""
        hits = [qualname] if "." in qualname else []
        s = self._files.get(near) if near is not None else None
        if not hits and s is not None:
            hits = [f"{m}.{qualname}" for m in s.stars if self._resolve(f"{m}.{qualname}", near) is not None]
        if len(hits) != 1:
            return False
        hit = self._resolve(hits[0], near)
        # an exemption: a class whose bases the index cannot see (`nn` from a star import) still counts
        return hit is not None and hit[1] in hit[0].clears and self.is_module_class(hits[0], near) is not False

    def hand_written_backward(self, qualname: str, near: str | None = None) -> bool:
        """A project class with its own `backward` method that is no autograd Function or nn.Module (a NumPy
        layer or from-scratch model): `x.backward(...)` in its importers may be that method."""
        hit = self._resolve(qualname, near)
        if hit is None:
            # `from exercise.layers import *`: any such class of that module
            path = self._module_file(qualname, near)
            s = self._files.get(path) if path is not None else None
            return s is not None and any(_hand_written(s, c) for c in s.classes)
        return hit[1] in hit[0].classes and _hand_written(hit[0], hit[1])

    def method_clears(self, qualname: str, method: str, near: str | None = None, _seen=None) -> bool:
        """The method `method` that project class `qualname` has (its own, or the first base's that
        defines it, bases in order) clears gradients (`Class.method` in the file's `clearing`)."""
        hit = self.resolve(qualname, near)
        if hit is None or hit[1] not in hit[0].classes:
            return False
        s, name = hit
        seen = _seen if _seen is not None else set()
        if (s.path, name) in seen or len(seen) > 8:
            return False
        seen.add((s.path, name))
        if f"{name}.{method}" in s.functions:
            return f"{name}.{method}" in s.clearing
        for base in s.classes[name]:
            full = f"{s.names[0]}.{base}" if base in s.classes and s.names else base
            if self.resolve(full, s.path) is None:
                return False  # a base the index cannot see may define it
            if self.method_clears(full, method, s.path, seen):
                return True
        return False

    # -- call sites across files ---------------------------------------------
    def sites_of(self, path: str, function: str) -> list[tuple[str, CallSite]]:
        """(caller path, site) for each call in another file that resolves to `function` of `path`."""
        if self._sites is None:
            table: dict[str, list[tuple[str, CallSite]]] = {}
            for caller, s in self._files.items():
                for site in s.sites:
                    hit = self.resolve(site.target, caller)
                    if hit is not None and hit[1] in hit[0].functions and hit[0].path != caller:
                        table.setdefault(f"{hit[0].path}:{hit[1]}", []).append((caller, site))
            self._sites = table
        return self._sites.get(f"{os.path.abspath(path)}:{function}", [])

    def dependencies(self, path: str) -> list[str]:
        """The project files whose summaries this file's facts may read: the files of every module
        its imports name, and theirs in turn (a base class may come from a third file)."""
        start = os.path.abspath(path)
        found: list[str] = []
        seen = {start}
        stack = [start]
        while stack:
            for dep in self._direct_deps(stack.pop()):
                if dep not in seen:
                    seen.add(dep)
                    found.append(dep)
                    stack.append(dep)
        return sorted(found)

    def _direct_deps(self, path: str) -> list[str]:
        """The files of the modules `path`'s imports name (the longest prefix that is a file),
        once per file: every file's closure walks them again."""
        deps = self._direct.get(path)
        if deps is None:
            deps = []
            s = self._files.get(path)
            for q in s.imports.values() if s is not None else ():
                parts = q.split(".")
                for k in range(len(parts), 0, -1):
                    dep = self._module_file(".".join(parts[:k]), s.path)
                    if dep is not None:
                        deps.append(dep)
                        break
            self._direct[path] = deps
        return deps

    def fingerprint(self, path: str) -> str:
        """What a cached result of `path` must be keyed by besides its own text: the summaries of
        the files it depends on, and the calls of its functions from other files."""
        import hashlib

        h = hashlib.sha256()
        for dep in self.dependencies(path):
            digest = self._digests.get(dep)
            if digest is None:
                s = self._files[dep]
                digest = self._digests[dep] = hashlib.sha256(repr((
                    dep, s.names, sorted(s.imports.items()), sorted(s.classes.items()), sorted(s.functions),
                    sorted(s.stateless), s.returned_facts())).encode()).digest()
            h.update(digest)
        own = self._files.get(os.path.abspath(path))
        if own is not None:
            h.update(repr(own.names).encode())
            for fn in sorted(own.functions):
                h.update(repr([(p, site.no_grad, site.caller, site.classes)
                              for p, site in self.sites_of(own.path, fn)]).encode())
        return h.hexdigest()

    def view(self, path: str) -> "ProjectView":
        return ProjectView(self, os.path.abspath(path))


class ProjectView:
    """The project as one file sees it (what FileIndex holds)."""

    def __init__(self, project: ProjectIndex, path: str):
        self.project = project
        self.path = path
        self.package = package_of(path)

    def is_module_class(self, qualname: str) -> bool | None:
        return self.project.is_module_class(qualname, self.path)

    def parameter_free(self, qualname: str) -> bool | None:
        return self.project.parameter_free(qualname, self.path)

    def callers_grad(self, function: str, inference_name) -> bool | None:
        """Whether calls from other files run `function` with grad enabled: None when no other
        file calls it, False when every such call runs with grad disabled (under no_grad, or in
        a function decorated so, or in an inference entry point named like `evaluate`)."""
        sites = self.project.sites_of(self.path, function)
        if not sites:
            return None
        return any(not site.no_grad and not (site.caller and inference_name(site.caller)) for _p, site in sites)

    def module_factory(self, qualname: str) -> tuple[Returned, ...] | None:
        return self.project.module_factory(qualname, self.path)

    def passed_classes(self, function: str, position: int | None, keyword: str) -> list[str] | None:
        """The class each call from another file surely passes for a parameter of top-level `function` (at
        `position` when it may be passed positionally, else only as `keyword`): [] when no other file calls
        it, None when a call passes something the summary could not name."""
        out: list[str] = []
        for _p, site in self.project.sites_of(self.path, function):
            given = dict(site.classes)
            cls = given.get(keyword) or (given.get(str(position)) if position is not None else None)
            if cls is None:
                return None
            out.append(cls)
        return out

    def forward_head(self, qualname: str) -> str | None:
        return self.project.forward_head(qualname, self.path)

    def forward_clears(self, qualname: str) -> bool:
        return self.project.forward_clears(qualname, self.path)

    def forward_numbers(self, qualname: str) -> frozenset[int]:
        return self.project.forward_numbers(qualname, self.path)

    def returns_number(self, qualname: str) -> bool:
        return self.project.returns_number(qualname, self.path)

    def hand_written_backward(self, qualname: str) -> bool:
        return self.project.hand_written_backward(qualname, self.path)

    def star_imports(self) -> tuple[str, ...]:
        own = self.project.summary(self.path)
        return own.stars if own is not None else ()

    def method_clears(self, qualname: str, method: str) -> bool:
        return self.project.method_clears(qualname, method, self.path)

    def facts(self, qualnames) -> tuple:
        """What this file reads from the project, for the incremental parser's reuse key."""
        return tuple((q, self.is_module_class(q), self.parameter_free(q), self.module_factory(q) is not None,
                      self.hand_written_backward(q)) for q in sorted(qualnames))
