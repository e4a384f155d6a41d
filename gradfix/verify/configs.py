"""Constructor arguments synthesised from configuration objects with defaults.

Models are often built from one configuration object: `Model(cfg)` reading `cfg.hidden`, `cfg.n_layers`. When no
call in the file gives the arguments (call_sites.py), such a parameter gets a configuration the project itself
defines, with its defaults:

- the parameter's annotation, or else a class of the project whose instances have every attribute the constructor
  reads from the parameter, built with no arguments: a dataclass whose fields all have defaults, a NamedTuple whose
  fields all have defaults, or a plain class whose constructor needs nothing (class-level settings);
- an `argparse.Namespace` of the file's own `parser.add_argument("--hidden", default=...)` defaults (what
  `parse_args([])` would give), when every attribute read is one of its options and each default is an expression
  the verifier evaluates at load (a literal or a constant of the file).

This is an input choice like a synthetic tensor: the coverage rule still applies (every changed statement must run
in both versions), and the verdict's detail says which configuration was built. Both versions get the same recipe,
evaluated in each version's own namespace.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import types
from dataclasses import dataclass
from typing import Any

from . import source as S
from .call_sites import _eval_in

# parameter names that usually hold parsed command-line options: the file's argparse defaults are tried first
_ARGS_NAMES = {"args", "arg", "opt", "opts", "options", "flags", "hparams", "hp", "FLAGS", "parsed_args"}


@dataclass
class Recipe:
    """How one constructor parameter is built, the same way in both versions."""

    param: str
    kind: str  # "class": `cls_name()` in the loaded module; "namespace": argparse defaults; "dict": a dict literal
    text: str  # for the detail, e.g. "config `Config()` with its defaults"
    cls_name: str = ""
    options: dict | None = None  # dest -> ast node of its default (None: the default is None)
    node: ast.AST | None = None  # "dict": the dict literal

    def build(self, mod: types.ModuleType) -> Any:
        if self.kind == "class":
            return getattr(mod, self.cls_name)()
        if self.kind == "dict":
            return _eval(self.node, mod)
        values = {k: (None if v is None else _eval(v, mod)) for k, v in (self.options or {}).items()}
        return argparse.Namespace(**values)


@dataclass
class Plan:
    recipes: list[Recipe]

    @property
    def text(self) -> str:
        return "; ".join(f"{r.param} = {r.text}" for r in self.recipes)

    def kwargs(self, mod: types.ModuleType) -> dict:
        return {r.param: r.build(mod) for r in self.recipes}


def _eval(node: ast.AST, mod: types.ModuleType) -> Any:
    return _eval_in(node, vars(mod), getattr(mod, "__file__", None) or "<config>")


# --------------------------------------------------------------------------- what the constructor reads


def _class_def(tree: ast.Module, name: str) -> ast.ClassDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _init_def(tree: ast.Module, name: str, depth: int = 0) -> ast.FunctionDef | None:
    """The `__init__` a class of the file runs: its own, else the first base of the file that has one."""
    cls = _class_def(tree, name)
    if cls is None or depth > 5:
        return None
    for s in cls.body:
        if isinstance(s, ast.FunctionDef) and s.name == "__init__":
            return s
    for b in cls.bases:
        if isinstance(b, ast.Name):
            found = _init_def(tree, b.id, depth + 1)
            if found is not None:
                return found
    return None


def attribute_reads(tree: ast.Module, cls: ast.ClassDef | None, init: ast.FunctionDef, param: str,
                    keys: bool = False) -> list[str]:
    """Attributes read from `param` in the constructor (also through `p = param` and `self.p = param`, there and in
    the class's other methods), in order of appearance; `keys`: the string keys read instead (`cfg["emb_dim"]`)."""
    names = {param}
    self_attrs: set[str] = set()
    for n in ast.walk(init):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == param:
            for t in n.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                elif (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    self_attrs.add(t.attr)
    out: list[str] = []

    def holder(node: ast.AST, in_init: bool) -> bool:
        if isinstance(node, ast.Name):
            return in_init and node.id in names
        return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr in self_attrs)

    bodies: list[tuple[ast.AST, bool]] = [(init, True)]
    if cls is not None and self_attrs:
        bodies += [(s, False) for s in cls.body if isinstance(s, ast.FunctionDef) and s is not init]
    for body, in_init in bodies:
        for n in ast.walk(body):
            attr = None
            if keys:
                if (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and holder(n.value, in_init)
                        and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)
                        and n.slice.value not in out):
                    out.append(n.slice.value)
                continue
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and holder(n.value, in_init):
                attr = n.attr
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr"
                  and len(n.args) == 2 and holder(n.args[0], in_init) and isinstance(n.args[1], ast.Constant)
                  and isinstance(n.args[1].value, str)):
                attr = n.args[1].value  # getattr(cfg, "x") without a default: it must exist
            if attr is not None and attr not in out and not attr.startswith("__"):
                out.append(attr)
    return out


# --------------------------------------------------------------------------- configuration classes


def _project_class(cls: Any, mod: types.ModuleType) -> bool:
    from .sandbox import LOCAL_LOADED

    return isinstance(cls, type) and (cls.__module__ == mod.__name__ or cls.__module__ in LOCAL_LOADED)


def config_class_kind(cls: type) -> str | None:
    """'dataclass', 'NamedTuple' or 'class' when `cls()` builds a configuration with its defaults; else None."""
    import torch

    if issubclass(cls, (torch.nn.Module, torch.Tensor, BaseException, torch.optim.Optimizer)):
        return None
    if dataclasses.is_dataclass(cls):
        fields = [f for f in dataclasses.fields(cls) if f.init]
        if all(f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING for f in fields):
            return "dataclass"
        return None
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "NamedTuple" if set(cls._fields) <= set(getattr(cls, "_field_defaults", {})) else None
    if issubclass(cls, (dict, list, set, str, int, float, bytes)):
        return None
    from .inputs import required_params

    if cls.__init__ is not object.__init__ and required_params(cls.__init__, skip_first=True):
        return None
    settings = [k for k, v in vars(cls).items() if not k.startswith("_") and not callable(v)
                and not isinstance(v, (property, classmethod, staticmethod))]
    init_sets = cls.__init__ is not object.__init__
    return "class" if settings or init_sets else None


def _describe(cls_name: str, kind: str) -> str:
    what = {"dataclass": "dataclass", "NamedTuple": "NamedTuple", "class": "config class"}[kind]
    return f"{what} `{cls_name}()` with its defaults"


def _annotation_class(cls: type, param: str, mod: types.ModuleType) -> tuple[str, type] | None:
    try:
        ann = inspect.signature(cls.__init__).parameters[param].annotation
    except (TypeError, ValueError, KeyError):
        return None
    if ann is inspect.Parameter.empty:
        return None
    if isinstance(ann, str):
        try:
            ann = eval(ann, vars(mod))  # noqa: S307 - an annotation of the loaded file
        except Exception:  # noqa: BLE001
            return None
    if not isinstance(ann, type):
        return None
    for k, v in vars(mod).items():
        if v is ann and not k.startswith("_"):
            return k, ann
    return None


def _has_all(obj: Any, attrs: list[str]) -> bool:
    return all(hasattr(obj, a) for a in attrs)


def _class_recipe(cls: type, param: str, reads: list[str], mod: types.ModuleType) -> Recipe | None:
    ann = _annotation_class(cls, param, mod)
    candidates: list[tuple[str, type]] = []
    if ann is not None and _project_class(ann[1], mod):
        candidates.append(ann)
    elif reads:
        seen: set[int] = set()
        for k, v in vars(mod).items():
            if isinstance(v, type) and not k.startswith("_") and id(v) not in seen and _project_class(v, mod):
                seen.add(id(v))
                candidates.append((k, v))
        # a name that says config first (`Config`, `GPTConfig`, `HParams`), then in the file's order
        candidates.sort(key=lambda kv: 0 if any(w in kv[0].lower() for w in ("config", "conf", "cfg", "param",
                                                                            "args", "opt", "setting")) else 1)
    for cls_name, c in candidates:
        kind = config_class_kind(c)
        if kind is None:
            continue
        try:
            inst = c()
        except Exception:  # noqa: BLE001 - user code; another candidate may do
            continue
        if _has_all(inst, reads):
            return Recipe(param, "class", _describe(cls_name, kind), cls_name=cls_name)
    return None


# --------------------------------------------------------------------------- argparse defaults


def _dest(call: ast.Call) -> str | None:
    for k in call.keywords:
        if k.arg == "dest" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [f for f in flags if f.startswith("--")]
    if longs:
        return longs[0][2:].replace("-", "_")
    if flags:
        return flags[0].lstrip("-").replace("-", "_")
    return None


def argparse_defaults(tree: ast.Module) -> dict[str, ast.AST | None | bool]:
    """dest -> the default's AST node (None when the default is None; False: not evaluable here) of every
    `X.add_argument(...)` and `X.set_defaults(...)` in the file, the first one of each dest winning."""
    ok = S.evaluable(tree)
    out: dict[str, Any] = {}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("add_argument", "set_defaults")]
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        if call.func.attr == "set_defaults":
            for k, v in kw.items():
                out.setdefault(k, v if ok(v) else False)
            continue
        dest = _dest(call)
        if not dest or not dest.isidentifier():
            continue
        action = kw.get("action")
        act = action.value if isinstance(action, ast.Constant) else None
        if "default" in kw:
            node = kw["default"]
            if isinstance(node, ast.Constant) and node.value is None:
                val: Any = None
            elif not ok(node):
                val = False
            else:
                val = _typed(node, kw.get("type"))
        elif act == "store_true":
            val = ast.Constant(False)
        elif act == "store_false":
            val = ast.Constant(True)
        else:
            val = None
        out.setdefault(dest, val)
    return out


def _typed(node: ast.AST, typ: ast.AST | None) -> ast.AST:
    """argparse converts a string default with `type=`: `default="64", type=int` gives 64."""
    if (isinstance(node, ast.Constant) and isinstance(node.value, str) and isinstance(typ, ast.Name)
            and typ.id in ("int", "float")):
        try:
            return ast.Constant({"int": int, "float": float}[typ.id](node.value))
        except ValueError:
            return node
    return node


def _namespace_recipe(tree: ast.Module, param: str, reads: list[str]) -> Recipe | None:
    if not reads:
        return None
    defaults = argparse_defaults(tree)
    if not defaults or any(a not in defaults or defaults[a] is False for a in reads):
        return None
    options = {k: v for k, v in defaults.items() if v is not False}
    shown = ", ".join(f"{a}={'None' if options[a] is None else ast.unparse(options[a])}" for a in reads[:4])
    more = f", ... ({len(options)} options)" if len(options) > len(reads[:4]) else ""
    return Recipe(param, "namespace", f"the file's argparse defaults `Namespace({shown}{more})`", options=options)


# --------------------------------------------------------------------------- configuration dicts


def _dict_recipe(tree: ast.Module, param: str, keys: list[str]) -> Recipe | None:
    """A dict literal the file binds to a name (at module level, in a function or under `if __name__`), every value
    an expression the verifier evaluates at load, whose keys include every key the constructor reads."""
    if not keys:
        return None
    ok = S.evaluable(tree)
    found = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                and isinstance(n.value, ast.Dict) and n.value.keys):
            continue
        d = n.value
        names = [k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if len(names) != len(d.keys) or not set(keys) <= set(names) or not all(ok(v) for v in d.values):
            continue
        found.append((n.lineno, n.targets[0].id, d))
    if not found:
        return None
    line, var, d = min(found, key=lambda f: f[0])
    shown = ", ".join(f"{k!r}: {ast.unparse(v)}" for k, v in zip([k.value for k in d.keys][:3], d.values[:3]))
    more = ", ..." if len(d.keys) > 3 else ""
    return Recipe(param, "dict", f"the file's dict `{var}` (line {line}: `{{{shown}{more}}}`)", node=d)


# --------------------------------------------------------------------------- entry point


def config_plan(tree: ast.Module, name: str, cls: type, mod: types.ModuleType, req: list[str]) -> Plan | None:
    """A recipe for every required constructor parameter of `name`, or None when one has none."""
    init = _init_def(tree, name)
    if init is None:
        return None
    cdef = _class_def(tree, name)
    recipes = []
    for p in req:
        reads = attribute_reads(tree, cdef, init, p)
        keys = attribute_reads(tree, cdef, init, p, keys=True)
        if keys and not reads:  # `cfg["emb_dim"]`: a configuration dict
            found = _dict_recipe(tree, p, keys)
        else:
            order = (_namespace_recipe, _class_recipe) if p in _ARGS_NAMES else (_class_recipe, _namespace_recipe)
            found = None
            for make in order:
                found = (make(tree, p, reads) if make is _namespace_recipe else make(cls, p, reads, mod))
                if found is not None:
                    break
        if found is None:
            return None
        recipes.append(found)
    return Plan(recipes)


def reads_summary(tree: ast.Module, name: str, req: list[str]) -> str:
    """`cfg.hidden, cfg.n_layers` read by the constructor, for the untestable message."""
    init = _init_def(tree, name)
    if init is None:
        return ""
    cdef = _class_def(tree, name)
    shown = [f"{p}.{a}" for p in req for a in attribute_reads(tree, cdef, init, p)]
    shown += [f"{p}[{k!r}]" for p in req for k in attribute_reads(tree, cdef, init, p, keys=True)]
    return ", ".join(shown[:5]) + (", ..." if len(shown) > 5 else "")
