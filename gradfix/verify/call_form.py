"""Is the rewrite only the call form? What a GF305 check that never runs the rewritten file needs to know.

The direct GF305 checks build the receiver from the *original* file and compare `m.forward(x)` with `m(x)` on it:
a proof of the two call forms, and so of the rewrite only when the rewritten file is the original with that one
call written the other way. The codemod says so, but a verdict must not rest on what the rewrite was meant to be:
`call_form_only` reads both trees (stdlib `ast`, positions ignored) and says where they differ otherwise, e.g. a
combined rewrite that also changed another statement, or a rewrite that added an import.
"""

from __future__ import annotations

import ast
import copy


def _dump(node: ast.AST) -> str:
    return ast.dump(node, include_attributes=False)


class _Direct(ast.NodeTransformer):
    """`R.forward(args)` -> `R(args)` for the calls equal to `old` that span `line` (or all such calls)."""

    def __init__(self, old: str, line: int | None):
        self.old, self.line, self.done = old, line, 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        spans = self.line is None or node.lineno <= self.line <= (node.end_lineno or node.lineno)
        if isinstance(f, ast.Attribute) and f.attr == "forward" and spans and _dump(node) == self.old:
            self.done += 1
            return ast.Call(func=f.value, args=node.args, keywords=node.keywords)
        return node


def call_form_only(old_tree: ast.Module, new_tree: ast.Module, call_old: str, line: int | None) -> str | None:
    """None when `new_tree` is `old_tree` with the call `call_old` (a `R.forward(...)` at `line`) turned into
    `R(...)`, and nothing else changed; otherwise why not, in words for a verdict's detail."""
    try:
        old = ast.parse(call_old.strip(), mode="eval").body
    except SyntaxError:
        return f"the rewritten call `{call_old.strip()[:60]}` does not parse on its own"
    if not (isinstance(old, ast.Call) and isinstance(old.func, ast.Attribute) and old.func.attr == "forward"):
        return f"`{call_old.strip()[:60]}` is not a `.forward(...)` call"
    want = _dump(new_tree)
    for at in (line, None):  # the call at the finding's line first; then every copy of it in the file
        t = _Direct(_dump(old), at)
        made = t.visit(copy.deepcopy(old_tree))
        if t.done and _dump(made) == want:
            return None
    return ("the rewritten file differs from the original by more than this call's form (the check compares the "
            "two call forms on a module built from the original file, so it cannot show the other changes)")
