"""GF303 parameter-moved-after-wrap: `nn.Parameter(t).to(dev)` is a plain tensor, not a parameter."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.torchapi import TENSOR_FACTORIES
from gradfix.analysis.params import (
    FACTORIES, MOVE_METHODS, CopyChain, all_calls, code_of, copy_chain, method_text, outermost_chain, stored_name,
    used_as_leaf,
)
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple)


def moved_inside(chain: CopyChain) -> cst.Call | None:
    """`nn.Parameter(t).to(dev).double()` -> `nn.Parameter(t.to(dev).double())`; None without a data argument."""
    base = chain.base
    data = next((a for a in base.args if a.keyword is None and not a.star), None)
    if data is None:
        data = next((a for a in base.args if a.keyword is not None and a.keyword.value == "data"), None)
    if data is None:
        return None
    inner = data.value
    if not isinstance(inner, _ATOMS) and not inner.lpar:
        inner = inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for mv in chain.moves:
        if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and \
                code_of(inner)[len(code_of(inner.func.value)):] == method_text(mv.call):
            continue  # `nn.Parameter(t.to(dev)).to(dev)`: the tensor is already moved
        inner = mv.call.with_changes(func=mv.call.func.with_changes(value=inner))  # type: ignore[union-attr]
    args = [a.with_changes(value=inner) if a is data else a for a in base.args]
    return base.with_changes(args=args)


def _already_there(chain: CopyChain) -> bool:
    """Every copying move takes the Parameter to a device its data was already moved to or created on
    (`nn.Parameter(torch.randn(n).to(device)).to(device)`, `nn.Parameter(torch.zeros(n, device=dev)).to(dev)`):
    `.to()` of a tensor already there returns the tensor itself, so the Parameter stays registered."""
    data = next((a.value for a in chain.base.args if a.keyword is None and not a.star), None)
    if data is None:
        return False
    placed: set[str] = set()
    cur = data
    while isinstance(cur, cst.Call):
        if isinstance(cur.func, cst.Attribute) and cur.func.attr.value in ("to", "cuda"):
            placed.add(method_text(cur))
            cur = cur.func.value
            continue
        dev = next((a for a in cur.args if a.keyword is not None and a.keyword.value == "device"), None)
        if dev is not None:
            placed.add(f".to({code_of(dev.value)})")
        break
    return bool(chain.copying) and all(
        m.dtype is None and (method_text(m.call) in placed or
                             m.device is not None and f".to({code_of(m.device)})" in placed)
        for m in chain.copying)


def _from_argument(chain: CopyChain, index) -> bool:
    """The Parameter's data is computed from a parameter of the enclosing function (`m, p, n =
    torch.svd(aptinit); emb = torch.mm(m, p.diag()); nn.Parameter(emb).to(device)`): ops on a tensor keep
    its device, and a caller may pass one already on `device` (Graph-WaveNet's `supports[0]`), where
    `.to(device)` returns the Parameter itself. Where the data was created (a factory without `device=`)
    is not followed into: its sizes are not its data."""
    data = next((a.value for a in chain.base.args if a.keyword is None and not a.star), None)
    fn = index.enclosing(chain.outer, (cst.FunctionDef,))
    if data is None or not isinstance(fn, cst.FunctionDef):
        return False
    return _reads_argument(index.flow(fn), data, index.imports, 0)


def _reads_argument(flow, expr, imports, depth: int) -> bool:
    if depth > 6:
        return False
    if isinstance(expr, cst.Name):
        b = flow.name_binding(expr)
        if b is None:
            return False
        return b.is_param or (b.value is not None and _reads_argument(flow, b.value, imports, depth + 1))
    if isinstance(expr, cst.Call):
        q = qualname(expr.func, imports)
        if q in FACTORIES and not q.endswith("_like"):
            return False  # created here: `torch.randn(n, 10)` reads `n` as a size
        if q in TENSOR_FACTORIES and q.endswith("Tensor") and len(expr.args) >= 2:
            return False  # `torch.Tensor(dim, 1)`: two or more arguments are sizes, a fresh CPU tensor
        parts = [a.value for a in expr.args]
        if isinstance(expr.func, cst.Attribute):
            parts.append(expr.func.value)  # `p[:10].pow(0.5)`: a method of the tensor
        return any(_reads_argument(flow, x, imports, depth + 1) for x in parts)
    if isinstance(expr, cst.BinaryOperation):
        return _reads_argument(flow, expr.left, imports, depth + 1) or \
            _reads_argument(flow, expr.right, imports, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _reads_argument(flow, expr.expression, imports, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _reads_argument(flow, expr.value, imports, depth + 1)
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "data", "mT", "H"):
        return _reads_argument(flow, expr.value, imports, depth + 1)
    return False


class ParameterMovedAfterWrap(Rule):
    id = "GF303"
    name = "parameter-moved-after-wrap"
    summary = "`nn.Parameter(t).to(dev)` / `.cuda()` / `.double()` stores a plain tensor copy, not a parameter"
    docs = RuleDocs(
        what=(
            "Finds `nn.Parameter(t)` followed by a copy (`.to(device)`, `.cuda()`, `.to(\"cuda\")`, `.double()`, "
            "`.half()`) and stored: as `self.w = ...` in an `nn.Module` class, or in a name elsewhere. `.to()` on a "
            "module (`nn.Linear(...).to(dev)`) and a Parameter built from an already-moved tensor "
            "(`nn.Parameter(t.to(dev))`) are the correct forms and are left alone, and so is a move to a device "
            "the data was already moved to or created on (`nn.Parameter(t.to(dev)).to(dev)`, "
            "`nn.Parameter(torch.randn(n, device=dev)).to(dev)`): `.to()` then returns the Parameter itself. Left "
            "alone too: data computed from an argument of the enclosing function (`def __init__(self, aptinit, "
            "device)`: `m, p, n = torch.svd(aptinit); nn.Parameter(torch.mm(m, p)).to(device)`): ops keep their "
            "input's device and dtype, so when the caller passes a tensor already on `device` the move is a no-op "
            "returning the Parameter, and which device the caller's tensor is on is not shown."
        ),
        why=(
            "A copy of a Parameter is an ordinary tensor (a non-leaf). Assigned to `self.w` it is not registered: "
            "it is missing from `parameters()` and `state_dict()`, the optimizer never updates it, `model.to()` "
            "does not move it, and nothing warns (pytorch #17484, #39062; davidmrau/mixture-of-experts #12, "
            "`w_gate` never learned). Invisible on CPU: `.to(\"cpu\")` returns the Parameter itself (measured: 0 "
            "parameters registered with a real copy, 1 without)."
        ),
        example="class Gate(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
                "        self.w_gate = nn.Parameter(torch.zeros(16, 4)).to(device)",
        fixed_example="class Gate(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
                      "        self.w_gate = nn.Parameter(torch.zeros(16, 4).to(device))",
        fix="Moves the copies inside: `nn.Parameter(t.to(device))` (other Parameter arguments kept).",
        fix_safety=(
            "Unsafe by label: the module gains a parameter, so `parameters()`, the optimizer and `state_dict()` "
            "change (an old checkpoint then lacks the key). That is the point; the verifier decides."
        ),
        verification=(
            "`registers-params` for attributes of a module class: both versions are built (no-argument "
            "constructor or fixture) in float32 with device moves of CPU tensors forced to copy (as on a GPU); "
            "the rewrite's parameter names and state_dict keys must be a superset that now includes the attribute, "
            "its value equal to the original's tensor, and forward outputs and the common gradients equal "
            "(`fixes-hazard`: \"the parameter is now registered: 0 -> 1 parameters named w\"). For a plain name, "
            "`leaf-tensor` as in GF302."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a `.to()`/`.cuda()`/... call (MOVE_METHODS) of an `nn.Parameter(...)`
        (`copy_chain` kind "parameter")."""
        if not (bool(facts.called_attrs & MOVE_METHODS) and "Parameter" in facts.idents):
            return False
        # the innermost move is called on the Parameter call itself (`copy_chain` without a leaf: every link
        # a move, `classify_move`, and `requires_grad_()` between them refused)
        pairs = facts.methods_on_calls
        if pairs is None:
            return True
        names = {"Parameter"} | {local for local, name in facts.imported_as if name == "Parameter"}
        return any(m in MOVE_METHODS and n in names for m, n in pairs)

    def check(self, ctx):
        index = ctx.index
        for node in all_calls(index):
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in MOVE_METHODS:
                continue
            chain = copy_chain(node, index.imports)
            if chain is None or chain.kind != "parameter" or not outermost_chain(node, index):
                continue
            finding = self._finding(ctx, chain)
            if finding is not None:
                yield finding

    def _finding(self, ctx, chain: CopyChain):
        index = ctx.index
        name = stored_name(chain.outer, index)
        if name is None:
            return None  # only what is kept: `self.w = ...` or `w = ...`
        if _already_there(chain):
            return None  # `nn.Parameter(t.to(device)).to(device)`: the move returns the Parameter itself
        if _from_argument(chain, index):
            return None  # the data may already be on the device (or of the dtype): not shown
        moves = ", ".join(f"`{method_text(m.call)}`" for m in chain.copying)
        cls = index.enclosing_class(chain.outer)
        in_module = name.startswith("self.") and cls is not None and cls.name.value in index.module_classes
        old = code_of(chain.outer)
        if in_module:
            rg = next((a for a in chain.base.args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
            frozen = rg is not None and isinstance(rg.value, cst.Name) and rg.value.value == "False"
            trained = "" if frozen else " and is never trained"
            message = (f"`{name} = {shorten(old)}`: {moves} copies the Parameter into a plain tensor, so `{name}` is not "
                       f"registered (missing from parameters() and state_dict){trained}; wrap the moved tensor instead")
        else:
            use = used_as_leaf(chain.outer, index)
            if index.under_no_grad(chain.outer) or use is None:
                return None
            message = (f"`{shorten(old)}`: {moves} copies the Parameter, so `{name}` holds a non-leaf plain tensor: its "
                       f"`.grad` stays None and an optimizer given it raises \"can't optimize a non-leaf Tensor\" "
                       f"({use})")
        new_expr = moved_inside(chain)
        if new_expr is None:
            return ctx.finding(chain.outer, message)
        new = code_of(new_expr)
        if in_module:
            contract = {"kind": "registers-params", "class": cls.name.value, "attrs": [name[len("self."):]]}
        else:
            contract = {"kind": "leaf-tensor", "old": old, "new": new, "form": "parameter"}
        fix = ctx.fix(f"move the copy inside: `{shorten(new)}`", [Edit(chain.outer, new_expr)], Safety.UNSAFE, contract)
        return ctx.finding(chain.outer, message, fix)


RULE = ParameterMovedAfterWrap
