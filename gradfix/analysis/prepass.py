"""The `ast` pre-pass: which rules could match a file, decided before libcst parses it.

libcst's parse and the tree index built on it are most of a cold `check` (bench/PROFILE.md),
while most files of a library hold nothing any rule reports. CPython's parser is about 15x
cheaper, and the engine parses with it first anyway (positions, and a SyntaxError before
libcst's parser can crash on deep nesting). One walk of that tree collects the names and
shapes below; each rule declares next to its matcher (`Rule.may_match`) a necessary condition
on them: False means the rule cannot report anything in the file, so it is not run, and a file
no rule may match is never parsed with libcst.

A condition must stay necessary, never a guess: it names what the matcher itself requires (a
`.backward(...)` call for the training-loop rules, a call named like a deprecated API for GF301).
tests/test_prepass.py checks that every golden case with findings passes the condition of each
rule that fires in it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Facts:
    """What one file's `ast` says, for the rules' necessary conditions."""

    text: str                        # the source (substring tests: a name in an import path, a comment)
    path: str                        # the file's path (a relative import takes its package from it)
    idents: frozenset[str]           # every identifier: names, attributes, keywords, defs, import names
    attrs: frozenset[str]            # `x.<attr>` anywhere (load, store or delete)
    stored_attrs: frozenset[str]     # `x.<attr> = ...` (and `+=`, `del`)
    called: frozenset[str]           # the last name of every call's callee: `f(...)`, `x.f(...)`
    called_attrs: frozenset[str]     # the attribute of every `x.f(...)` call
    discarded: frozenset[str]        # `x.f(...)` as a statement of its own (its value unused)
    defs: frozenset[str]             # names of functions defined anywhere in the file
    augassign: bool                  # an augmented assignment (`x += 1`)
    subscript_store: bool            # an item assignment (`x[i] = v`, `x[i] += v`)
    true_arg: bool                   # a call given the literal `True` (positionally or as a keyword)
    init_class: bool                 # a class whose body defines `__init__`
    attr_container: bool             # `x.a = [...]` (a display or comprehension of a list, tuple, set or dict)
    relative_import: bool            # `from . import x`: a qualified name may take its package from the path
    imported_as: frozenset[tuple[str, str]]  # (local name, last part of what it imports) per import alias

    @property
    def backward_call(self) -> bool:
        """A `x.backward(...)` call: every training step (analysis/loops.py) is found from one."""
        return "backward" in self.called_attrs


_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.GeneratorExp, ast.DictComp)


def facts_of(tree: ast.Module, text: str, path: str = "") -> Facts:
    idents: set[str] = set()
    attrs: set[str] = set()
    stored: set[str] = set()
    called: set[str] = set()
    called_attrs: set[str] = set()
    discarded: set[str] = set()
    defs: set[str] = set()
    imported_as: set[tuple[str, str]] = set()
    aug = sub_store = true_arg = init_class = relative = attr_container = False
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            idents.add(node.id)
        elif kind is ast.Attribute:
            attrs.add(node.attr)
            if type(node.ctx) is not ast.Load:
                stored.add(node.attr)
        elif kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute:
                called.add(func.attr)
                called_attrs.add(func.attr)
            elif type(func) is ast.Name:
                called.add(func.id)
            if not true_arg:
                true_arg = any(type(a) is ast.Constant and a.value is True for a in node.args) or any(
                    type(k.value) is ast.Constant and k.value.value is True for k in node.keywords)
        elif kind is ast.keyword:
            if node.arg:
                idents.add(node.arg)
        elif kind is ast.Expr:
            value = node.value
            if type(value) is ast.Call and type(value.func) is ast.Attribute:
                discarded.add(value.func.attr)
        elif kind is ast.Assign:
            if not attr_container and len(node.targets) == 1 and type(node.targets[0]) is ast.Attribute:
                attr_container = type(node.value) in _CONTAINERS
        elif kind is ast.AugAssign:
            aug = True
            if type(node.target) is ast.Subscript:
                sub_store = True
            elif type(node.target) is ast.Attribute:
                stored.add(node.target.attr)
        elif kind is ast.Subscript:
            if type(node.ctx) is ast.Store:
                sub_store = True
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defs.add(node.name)
            idents.add(node.name)
        elif kind is ast.ClassDef:
            idents.add(node.name)
            if not init_class:
                init_class = any(type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == "__init__"
                                 for s in node.body)
        elif kind is ast.arg:
            idents.add(node.arg)
        elif kind is ast.alias:
            idents.update(node.name.split("."))
            if node.asname:
                idents.add(node.asname)
                imported_as.add((node.asname, node.name.rsplit(".", 1)[-1]))
            else:
                imported_as.add((node.name, node.name))
        elif kind is ast.ImportFrom:
            if node.module:
                idents.update(node.module.split("."))
            if node.level:
                relative = True
    idents |= attrs
    return Facts(text, path, frozenset(idents), frozenset(attrs), frozenset(stored), frozenset(called),
                 frozenset(called_attrs), frozenset(discarded), frozenset(defs), aug, sub_store, true_arg,
                 init_class, attr_container, relative, frozenset(imported_as))


def rules_for(rules, tree: ast.Module, text: str, path: str = "") -> list:
    """The rules whose necessary condition holds in the file (in their order)."""
    facts = facts_of(tree, text, path)
    return [r for r in rules if r.may_match(facts)]
