"""Parsing a file for the engine, and the syntax checks a rewrite must pass.

CPython's parser runs first: libcst's native parser crashes the process on very deep nesting,
where CPython raises a SyntaxError, so a file only reaches libcst once `ast` accepted it.
`OPERATIONS` counts whole-file parses and code generations: tests/test_apply_cost.py reads it to
show that `apply` costs what `check` costs, whatever the number of fixes.
"""

from __future__ import annotations

import ast

import libcst as cst


class ParseFailure(Exception):
    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


def _python_tree(source: str) -> ast.Module:
    # CPython's parser first: libcst's native parser crashes the process on very deep
    # nesting (`"(" * 3000`), where CPython raises a SyntaxError.
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ParseFailure(f"syntax error: {exc.msg}", exc.lineno) from exc
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("cannot parse: too deeply nested", None) from exc
    except ValueError as exc:
        raise ParseFailure(f"cannot parse: {exc}", None) from exc


def parse_both(source: str, path: str) -> tuple[cst.Module, ast.Module]:
    """libcst's tree and CPython's (the analysis maps positions through the latter)."""
    tree_ = _python_tree(source)
    return _cst_tree(source), tree_


def _cst_tree(source: str, validate: bool = True) -> cst.Module:
    """libcst's tree of `source`. `validate=False` (a cold `check`'s lint, engine.py) builds the same tree
    without libcst checking each node as it is made (`_unvalidated`)."""
    try:
        if not validate:
            return _unvalidated(source)
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise ParseFailure(f"syntax error: {exc.message}", exc.raw_line) from exc
    except (RecursionError, ValueError) as exc:
        raise ParseFailure(f"cannot parse: {exc}", None) from exc


def _skip(self) -> None:
    return None


def _unvalidated(source: str) -> cst.Module:
    """`cst.parse_module(source)` without the per-node validation: every node libcst makes runs
    `CSTNode.__post_init__` -> `_validate`, checks of invariants on the node's fields (parentheses that
    match, whitespace around keywords) that a tree read from text the parser accepted already meets.
    They were a fifth of the parse of the kept files of a cold `check` (bench/PROFILE.md, branch p12), and
    libcst's own comment on `__post_init__` says as much ("avoid validating the tree when parsing a file").
    No node class defines a `__post_init__` of its own and no `_validate` changes a node
    (tests/test_parsing_unvalidated.py), so the tree is the one `parse_module` gives. The hook is set only for
    the parse and put back after it, even when the parse raises: nodes built afterwards (rewrites, fixes) are
    validated as always. Process-wide while it runs, so only `check`'s lint uses it, never the language
    server's threads."""
    node = cst.CSTNode
    saved = node.__dict__["__post_init__"]
    node.__post_init__ = _skip
    try:
        return cst.parse_module(source)
    finally:
        node.__post_init__ = saved


def _compiles(source: str) -> bool:
    try:
        compile(source, "<gradfix>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


# Parses and code generations of whole files by fix_source and of statements by its local
# check: a counted-operations test reads them (apply's cost must not grow with fixes x file).
# `round_parses`: whole-file parses that start a round (a round after fixes analyses the tree
# its check of the combined output parsed); `analyses`: whole-file analyses.
OPERATIONS = {"file_parses": 0, "file_chars": 0, "file_codegens": 0, "local_checks": 0, "local_chars": 0,
              "round_parses": 0, "analyses": 0}


def _parses(source: str, original_compiles: bool = True, trees: list | None = None) -> str | None:
    """Why `source` is not valid Python (None when it is). Byte-compiling also catches what
    the parser accepts but Python rejects (`return` outside a function); it is only asked
    of files whose original compiled. With `trees`, a valid source's libcst and CPython trees
    are put in it."""
    OPERATIONS["file_parses"] += 1
    OPERATIONS["file_chars"] += len(source)
    return _syntax_problem(source, original_compiles, trees)


def _syntax_problem(source: str, original_compiles: bool, trees: list | None = None) -> str | None:
    try:
        py_tree = ast.parse(source)
        if original_compiles:
            compile(py_tree, "<gradfix>", "exec", dont_inherit=True)
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if trees is not None:
        trees[:] = [module, py_tree]    # the next round analyses these: the text is not parsed again
    return None
