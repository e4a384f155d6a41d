"""Resolve dotted names through the file's imports (`F.relu` -> `torch.nn.functional.relu`)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.tree import children, concrete


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while type(expr) is cst.Attribute:     # no subclasses (tests/test_tree.py): `is` is isinstance here
        parts.append(expr.attr.value)
        expr = expr.value
    if type(expr) is cst.Name:
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def shorten(code: str, limit: int = 70) -> str:
    """Source text for a message: whitespace collapsed, cut to `limit` characters."""
    text = " ".join(code.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def target_names(target) -> list[str]:
    """The plain names an assignment target binds: `x`, and each name of `out, (aux, _), *rest`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in target_names(el.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def chain_root(expr: cst.BaseExpression) -> str | None:
    """`model` for `model.fc.weight`, `x[0].data`, `net(x).detach()`: the name a chain starts from."""
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr.value if isinstance(expr, cst.Name) else None


class ImportMap:
    """Local alias -> fully qualified name, from the module's top-level and nested imports."""

    def __init__(self, module: cst.Module, package: str | None = None):
        """`package`: the file's package (from the project index), so that relative imports
        resolve too (`from .net import Net` in `models/` -> `models.net.Net`); without it they
        stay unresolved."""
        self.aliases: dict[str, str] = {}
        # every qualified name some import binds a local name to (the last one wins in `aliases`):
        # a name imported from two places is ambiguous without the import that reaches the use
        self.bindings: dict[str, set[str]] = {}
        # local names an import binds to a module (`import torch`, `import numpy as np`, `from torch import nn`):
        # a module is never a tensor's container or alias (`torch.add(wx, b)` returns a new tensor)
        self.modules: set[str] = set()
        for node in _walk_imports(module):
            if isinstance(node, cst.Import):
                for local, full, renamed in import_pairs(node):
                    if renamed:
                        self.aliases[local] = full
                    else:
                        self.aliases.setdefault(local, full)
                    self.bindings.setdefault(local, set()).add(full)
                    self.modules.add(local)
            elif isinstance(node, cst.ImportFrom):
                if isinstance(node.names, cst.ImportStar):
                    continue
                if node.relative:
                    from gradfix.analysis.summary import resolve_relative

                    base = resolve_relative(dotted(node.module) if node.module is not None else None,
                                            len(node.relative), package)
                    if base is None:
                        continue
                elif node.module is None:
                    continue
                else:
                    base = dotted(node.module) or ""
                for local, full in from_import_pairs(node, base):
                    self.aliases[local] = full
                    self.bindings.setdefault(local, set()).add(full)
                    if base.split(".")[0] in _LIBRARY_ROOTS:  # `from torch import nn`: the library's own names
                        self.modules.add(local)

    def is_module(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` (`torch`, `np.random`, `F`) names an imported module or a library's attribute."""
        name = dotted(expr)
        return name is not None and name.split(".")[0] in self.modules

    def resolve(self, name: str) -> str:
        root, _, rest = name.partition(".")
        full = self.aliases.get(root)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full


def import_pairs(node: cst.Import) -> list[tuple[str, str, bool]]:
    """(local name, what it names, renamed) per alias: `import numpy as np` -> ("np", "numpy", True),
    `import torch.nn` -> ("torch", "torch", False)."""
    out = []
    for alias in node.names:
        full = dotted(alias.name) or ""
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            out.append((alias.asname.name.value, full, True))
        else:
            root = full.split(".")[0]
            out.append((root, root, False))
    return out


def from_import_pairs(node: cst.ImportFrom, base: str) -> list[tuple[str, str]]:
    """(local name, qualified name) per alias of `from <base> import a, b as c` (no star import)."""
    out = []
    for alias in node.names:
        name = dotted(alias.name) or ""
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
            else name
        out.append((local, f"{base}.{name}"))
    return out


# libraries whose imported names are functions, classes or modules, never a user's container
_LIBRARY_ROOTS = frozenset({"torch", "numpy", "math", "torchvision", "torchaudio"})


def qualname(expr: cst.BaseExpression, imports: ImportMap) -> str | None:
    name = dotted(expr)
    return imports.resolve(name) if name is not None else None


def _walk_imports(module: cst.Module):
    """Import statements anywhere in the file: statements only, never into expressions."""
    stack: list[cst.CSTNode] = list(reversed(module.body))
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            for small in node.body:
                if type(small) in _IMPORTS:
                    yield small
            continue
        if kind in _CONTAINERS:
            stack.extend(reversed([c for c in children(node) if type(c) in _STATEMENT_LIKE]))


_IMPORTS = concrete(cst.Import, cst.ImportFrom)
_CONTAINERS = concrete(cst.BaseCompoundStatement, cst.IndentedBlock, cst.Else, cst.ExceptHandler,
                       cst.ExceptStarHandler, cst.Finally, cst.MatchCase)
_STATEMENT_LIKE = _CONTAINERS | {cst.SimpleStatementLine}
