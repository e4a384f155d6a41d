"""Reading one training iteration into events, in source order and branch-aware (the walker half of
iteration.py's `Iteration`).

Each statement of the iteration's body becomes zero or more `Event`s: zero_grad, forward, backward, unscale,
clip, optimizer step, scaler update, scheduler step, loss accumulation, gradient ops, and calls of the file's
helpers (resolved to the ops they run), each with the `if`/`try` branches it runs under and the loops nested in
the iteration around it. The questions the rules ask of those events are in iteration.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradfix.analysis.tree import if_branches, walk

from gradfix.analysis.flow import Kind
from gradfix.analysis.loops import backward_target, is_model_call, is_optimizer_step
from gradfix.analysis.names import chain_root, dotted, qualname
from gradfix.analysis.numbers import bound_values, is_metric_value, is_number, no_graph_from
from gradfix.analysis.trainstep import names_in

from gradfix.analysis.expressions import (
    dict_loss_values, number_dict_total, numpy_array_total, tensor_slot_total,
)
from gradfix.analysis.expressions import (
    CLIP_NORM, CLIP_VALUE, _arg, _grad_chain, _post_order_calls, accumulation_form, clears_grad_value, code_of,
    grad_op_info, literal_value,
)

# methods whose call is not taken as handing the receiver to code the walk cannot see (an opaque call)
_KNOWN_HARMLESS = frozenset({
    "parameters", "named_parameters", "state_dict", "train", "eval", "to", "cuda", "cpu", "param_groups",
    "get_last_lr", "get_lr", "get_scale", "is_enabled", "modules", "children", "named_modules", "buffers",
    "__call__", "forward", "item", "detach", "size", "numel", "scale", "half", "float", "double", "requires_grad_",
    "get_last_lr", "named_children", "extra_repr",
})


# --------------------------------------------------------------------------- events


@dataclass(eq=False)
class Event:
    op: str                      # zero_grad forward backward unscale clip step update sched accumulate grad_op helper opaque
    node: cst.CSTNode            # the call, or the small statement for statement-level events
    small: cst.BaseSmallStatement
    line: cst.CSTNode            # the SimpleStatementLine holding `small`
    path: tuple                  # ((If/Try node, branch index), ...) between the iteration's body and the event
    nested: tuple                # loops inside the iteration around the event
    order: int
    recv: str | None = None      # optimizer / scheduler / scaler / model source text
    info: dict = field(default_factory=dict)

    def compatible(self, other: "Event") -> bool:
        """Both can run in the same iteration (no `if`/`else` separates them)."""
        mine = {id(n): b for n, b in self.path}
        return all(mine.get(id(n), b) == b for n, b in other.path)

    @property
    def conditional(self) -> bool:
        return bool(self.path)


class EventWalker:
    """The walk that fills `self.events` (mixed into iteration.Iteration, whose facts it asks: kind_of,
    is_scheduler, is_scaler, helper_ops)."""

    # -- walking ---------------------------------------------------------
    def _block(self, stmts, path, nested, out, skip=None) -> None:
        start = len(out)
        self._block_inner(stmts, path, nested, out, skip)
        # `continue`/`break` leave the iteration only outside loops nested in it; return/raise always do
        jumps = (cst.Return, cst.Raise) if nested else (cst.Continue, cst.Break, cst.Return, cst.Raise)
        if path and any(isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and
                        any(isinstance(s, jumps) for s in st.body) for st in stmts):
            # a branch that leaves the iteration: its events never precede what follows the `if`
            for e in out[start:]:
                e.info["exits"] = True

    def _block_inner(self, stmts, path, nested, out, skip=None) -> None:
        for stmt in stmts:
            if skip is not None and stmt is skip:
                out.append(self._marker(stmt, path, nested))
                continue
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                # a suite (`if c: opt.step()`) is its own "line": the rules' moves need a real statement line
                for small in stmt.body:
                    out.extend(self._small(small, stmt, path, nested))
            elif isinstance(stmt, cst.If):
                for branch, owner in if_branches(stmt):
                    self._block(_body(owner), path + ((stmt, branch),), nested, out, skip)
            elif isinstance(stmt, cst.With):
                self._block(_body(stmt), path, nested, out, skip)
            elif isinstance(stmt, (cst.For, cst.While)):
                if id(stmt) in self.other_backward_loops:
                    continue  # a nested training loop of its own (a GAN's critic loop)
                self._block(_body(stmt), path, nested + (stmt,), out, skip)
            elif isinstance(stmt, cst.Try):
                self._block(_body(stmt), path, nested, out, skip)
                for i, h in enumerate(stmt.handlers):
                    self._block(_body(h), path + ((stmt, i + 1),), nested, out, skip)
                if stmt.orelse is not None:
                    self._block(_body(stmt.orelse), path, nested, out, skip)
                if stmt.finalbody is not None:
                    self._block(_body(stmt.finalbody), path, nested, out, skip)

    def _marker(self, stmt, path, nested) -> Event:
        self._order += 1
        return Event("inner", stmt, stmt, stmt, path, nested, self._order)

    def _epoch_walk(self, stmts) -> None:
        """Events of the epoch loop's body outside the batch loop, marked as before ("start") or after ("end") it."""
        events: list[Event] = []
        self._block(stmts, (), (), events, skip=self.loop)
        where = "start"
        for e in events:
            if e.op == "inner":
                where = "end"
                continue
            if e.nested and any(n is self.loop for n in e.nested):
                continue
            e.info["where"] = where
            self.epoch_events.append(e)

    def _ev(self, op, node, small, line, path, nested, recv=None, **info) -> Event:
        self._order += 1
        return Event(op, node, small, line, path, nested, self._order, recv, dict(info))

    def _small(self, small, line, path, nested) -> list[Event]:
        out: list[Event] = []
        # statement-level events
        if isinstance(small, cst.Assign):
            for t in small.targets:
                tgt = t.target
                if isinstance(tgt, cst.Attribute) and tgt.attr.value == "grad" and \
                        clears_grad_value(small.value, self.index.imports):
                    out.append(self._ev("zero_grad", small, small, line, path, nested, code_of(tgt.value),
                                        target="none"))
                    return out
        acc = self._accumulation(small)
        for call in _post_order_calls(small):
            out.extend(self._call(call, small, line, path, nested))
        if acc is not None:
            out.append(self._ev("accumulate", small, small, line, path, nested, acc[0], how=acc[1]))
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            g = self._grad_op(small.value)
            if g is not None:
                out.append(self._ev("grad_op", small.value, small, line, path, nested, None, **g))
        return out

    def _call(self, call: cst.Call, small, line, path, nested) -> list[Event]:
        flow = self.flow
        func = call.func
        target = backward_target(call, flow)
        if target is not None:
            scaled = None
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and \
                    isinstance(func.value.func, cst.Attribute) and func.value.func.attr.value == "scale":
                scaled = code_of(func.value.func.value)
            return [self._ev("backward", call, small, line, path, nested, None, scaled=scaled,
                             loss=code_of(target[0]))]
        if is_model_call(call, flow):
            return [self._ev("forward", call, small, line, path, nested, code_of(func))]
        if isinstance(func, cst.Attribute):
            meth = func.attr.value
            recv = func.value
            rtext = code_of(recv)
            if meth == "zero_grad":
                ok, stn = (False, None)
                kw = _arg(call, 0, "set_to_none")
                if kw is not None:
                    ok, stn = literal_value(kw)
                target = "opt" if self.kind_of(recv) is Kind.OPTIMIZER or "opt" in rtext.lower() else "model"
                return [self._ev("zero_grad", call, small, line, path, nested, rtext, target=target,
                                 set_to_none=stn if ok and isinstance(stn, bool) else None)]
            if meth.startswith("zero_grad") and meth != "zero_grad":
                # `mlp.zero_grads()`, a course framework's own clear: may clear, so GF205 stays silent,
                # while GF204's zero_grad rules need torch's own call
                return [self._ev("opaque", call, small, line, path, nested, rtext)]
            if meth == "step":
                if is_optimizer_step(call, flow):
                    if self.is_scaler(recv):
                        opt = code_of(call.args[0].value)
                        return [self._ev("step", call, small, line, path, nested, opt, scaled=rtext)]
                    return [self._ev("step", call, small, line, path, nested, rtext, scaled=None)]
                if self.is_scheduler(recv):
                    return [self._ev("sched", call, small, line, path, nested, rtext, args=bool(call.args))]
                return []
            if meth == "update" and self.is_scaler(recv) and not call.args:
                return [self._ev("update", call, small, line, path, nested, rtext)]
            if meth == "unscale_" and call.args:
                return [self._ev("unscale", call, small, line, path, nested, code_of(call.args[0].value),
                                 scaler=rtext)]
            if meth == "zero_" and _grad_chain(recv) is not None and _grad_chain(recv)[0] == "grad":
                return [self._ev("zero_grad", call, small, line, path, nested,
                                 code_of(_grad_chain(recv)[1]), target="none")]
            if meth in ("clip_grad_norm_", "clip_grad_value_") and qualname(func, self.index.imports) not in \
                    CLIP_NORM | CLIP_VALUE:
                value = _arg(call, 1, "max_norm" if meth == "clip_grad_norm_" else "clip_value")
                return [self._clip(call, small, line, path, nested, "norm" if "norm" in meth else "value", value,
                                   owner=rtext)]
        q = qualname(func, self.index.imports)
        if q in CLIP_NORM:
            return [self._clip(call, small, line, path, nested, "norm", _arg(call, 1, "max_norm"),
                               norm_type=_arg(call, 2, "norm_type"))]
        if q in CLIP_VALUE:
            return [self._clip(call, small, line, path, nested, "value", _arg(call, 1, "clip_value"))]
        helper = self.helper_ops(call)
        if helper:
            return [self._ev("helper", call, small, line, path, nested, code_of(func), ops=sorted(helper))]
        args = set()
        for a in call.args:
            v = a.value
            # the object itself (`opt`, `self.opt`, `model.parameters()`), not a value computed from it (`model(x)`)
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and \
                    v.func.attr.value in ("parameters", "named_parameters"):
                v = v.func.value
            if isinstance(v, (cst.Name, cst.Attribute)):
                r = chain_root(v)
                if r is not None:
                    args.add(r)
        d = dotted(func.value) if isinstance(func, cst.Attribute) else None
        root = d.split(".")[0] if d else None  # `opt.foo()`, not `model(x).gather()` (a value computed from it)
        if root is not None and func.attr.value not in _KNOWN_HARMLESS:
            args.add(root)
        if args:
            # an unknown call handed the optimizer, scaler or model may clear, unscale or clip: decided
            # once the whole iteration is read (see _resolve_calls)
            return [self._ev("call", call, small, line, path, nested, code_of(func), roots=sorted(args))]
        return []

    def _resolve_calls(self, events: list[Event]) -> list[Event]:
        names = self.watched_names()
        out = []
        for e in events:
            if e.op == "call":
                if not set(e.info.get("roots", ())) & names:
                    continue
                e.op = "opaque"
            out.append(e)
        return out

    def _clip(self, call, small, line, path, nested, fn, value, owner=None, norm_type=None) -> Event:
        ok, v = literal_value(value) if value is not None else (False, None)
        nt_ok, nt = literal_value(norm_type) if norm_type is not None else (True, 2.0)
        return self._ev("clip", call, small, line, path, nested, owner, fn=fn,
                        value=float(v) if ok and isinstance(v, (int, float)) else None,
                        value_src=code_of(value) if value is not None else None,
                        norm_type=float(nt) if nt_ok and isinstance(nt, (int, float)) else None, owner=owner)

    def _grad_op(self, call: cst.Call) -> dict | None:
        return grad_op_info(call)

    def _accumulation(self, small) -> tuple[str, str] | None:
        """(total name, how) for `total += <loss>` / `total = total + <loss>`; how is tensor/item/float/detach."""
        loss_names = self.loss_names()
        if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) and \
                isinstance(small.target, cst.Name):
            total, value = small.target.value, small.value
        elif isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) and \
                tensor_slot_total(self.flow, small):
            total, value = small.target.value.value, small.value  # `costs[i] += loss`, `costs` a torch tensor
        elif isinstance(small, cst.AugAssign) and self.loop is not None and \
                number_dict_total(self.flow, small, self.loop):
            # `totals[k] += losses[k]`, `totals` a dict of numbers made before the loop; the values of a dict
            # of loss terms iterated around it (`for k, v in loss_dict.items()`) are loss terms too
            total, value = small.target.value.value, small.value
            loss_names = loss_names | dict_loss_values(self.flow, small, loss_names, self.loop)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                and isinstance(small.value, cst.BinaryOperation) and isinstance(small.value.operator, cst.Add):
            total = small.targets[0].target.value
            left, right = small.value.left, small.value.right
            if isinstance(left, cst.Name) and left.value == total:
                value = right
            elif isinstance(right, cst.Name) and right.value == total:
                value = left
            else:
                return None
        else:
            return None
        if total in loss_names or not (names_in(value) & loss_names):
            return None
        how = accumulation_form(value, loss_names)
        if how == "tensor":
            for node in walk(value):
                b = self.flow.load_binding.get(id(node)) if isinstance(node, cst.Name) else None
                if b is not None and node.value in loss_names and b.no_grad:
                    how = "detach"  # the loss re-evaluated under no_grad carries no graph
                elif b is not None and node.value in loss_names and _left_autograd(b):
                    how = "float"  # `loss = loss.detach().cpu().numpy()` just before: the name no longer holds it
        st = self.flow.step_of.get(id(small))
        if how == "tensor" and st is not None:
            if numpy_array_total(self.flow, small, total):
                how = "float"  # `scores += score(out, y)` into `np.zeros(k)`: an ndarray never holds a graph
            elif st.no_grad:
                how = "detach"  # added with grad off (`with torch.no_grad():`): autograd records nothing
            elif is_number(self.index, value, bound_values(self.flow, st.index)):
                how = "float"  # `acc += accuracy(out, y)` with a helper ending in `.item()`
            elif is_metric_value(self.index, value, bound_values(self.flow, st.index), self.flow):
                how = "detach"  # `acc += acc_fn(out, y)`, a torchmetrics Accuracy: no graph to keep
            elif no_graph_from(self.index, value, loss_names, bound_values(self.flow, st.index)):
                how = "detach"  # `acc += accuracy(out, y) * n`, an `eq(argmax(...))` mean: no graph to keep
        return total, how


# --------------------------------------------------------------------------- small helpers


def _body(node) -> list:
    """The statements of a block owner; a one-line suite (`for x in y: f(x)`) comes back as itself."""
    if isinstance(node, cst.Module):
        return list(node.body)
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return list(getattr(body, "body", []))




def _calls_in(node):
    return [n for n in walk(node) if type(n) is cst.Call]


def _root_name_text(text: str) -> str | None:
    head = text.split(".")[0].split("[")[0].split("(")[0].strip()
    return head if head.isidentifier() else None


_LEAVING = ("numpy", "item", "tolist")


def _left_autograd(b) -> bool:
    """A binding whose value leaves autograd: `loss.detach().cpu().numpy()`, `loss.item()`, `float(loss)`."""
    value = b.value
    if b.kind in (Kind.NUMPY, Kind.NUMBER):
        return True
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Name):
        return func.value in ("float", "int")
    return isinstance(func, cst.Attribute) and func.attr.value in _LEAVING


# --------------------------------------------------------------------------- flags


def _flag_true(stmt: cst.CSTNode) -> str | None:
    """`skip = True` as a whole statement: the flag's name."""
    if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Assign:
        assign = stmt.body[0]
        if len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name and \
                type(assign.value) is cst.Name and assign.value.value == "True":
            return assign.targets[0].target.value
    return None


def _operands(test: cst.BaseExpression, op) -> list[cst.BaseExpression]:
    """The operands of a chain of `and` (or `or`): `not a and b and c` -> [not a, b, c]."""
    out, stack = [], [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and isinstance(node.operator, op):
            stack.extend((node.right, node.left))
        else:
            out.append(node)
    return out


def _requires_false(test: cst.BaseExpression, branch: int, flag: str) -> bool:
    """Running branch `branch` of `if test:` needs `flag` false: `if not flag:` (or `not flag and ...`), or
    the `else` of `if flag:` (or of `if flag or ...:`)."""
    if branch == 0:
        return any(type(p) is cst.UnaryOperation and isinstance(p.operator, cst.Not) and
                   type(p.expression) is cst.Name and p.expression.value == flag for p in _operands(test, cst.And))
    if branch == 1:  # the second arm: the `else` of `if flag:` when there is no `elif` (the caller checks)
        return any(type(p) is cst.Name and p.value == flag for p in _operands(test, cst.Or))
    return False


def _binds(node: cst.CSTNode, flag: str) -> bool:
    targets = []
    if type(node) is cst.Assign:
        targets = [t.target for t in node.targets]
    elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.For):
        targets = [node.target]
    elif type(node) is cst.NamedExpr:
        targets = [node.target]
    return any(type(n) is cst.Name and n.value == flag for t in targets for n in walk(t))


def flag_excludes(a: Event, b: Event, body: cst.CSTNode) -> bool:
    """`a` runs only in a block that sets a flag (`skip = True`, a statement of a branch `a` runs under and `b`
    does not), and `b` only under a test that needs the flag false (`if not skip:`), with no binding of the
    flag in `body` (the iteration's) after `a` and before that test: whenever `a` ran, `b` does not run after
    it in the same pass (a loss-spike guard that clears the gradients and sets `skip_step = True`; the step
    under `if not skip_step:`)."""
    shared = {id(n) for n, _ in b.path}
    flags, setters = set(), set()
    for node, branch in a.path:
        if id(node) in shared or type(node) is not cst.If:
            continue
        owner = next((o for k, o in if_branches(node) if k == branch), None)
        for stmt in getattr(getattr(owner, "body", None), "body", ()):
            name = _flag_true(stmt)
            if name:
                flags.add(name)
                setters.add(id(stmt.body[0]))  # the block's own `flag = True`, before or after `a`
    if not flags:
        return False
    ids_a = {id(n) for n, _ in a.path}
    for node, branch in b.path:
        if id(node) in ids_a or type(node) is not cst.If:
            continue
        if branch == 1 and type(node.orelse) is not cst.Else:
            continue  # an `elif` arm: what it needs of the flag is not read here
        for flag in flags:
            if not _requires_false(node.test, branch, flag):
                continue
            passed_a = False
            rebound = False
            for n in walk(body):  # pre-order, source order
                if n is a.line:
                    passed_a = True
                elif n is node:
                    break
                elif passed_a and id(n) not in setters and _binds(n, flag):
                    rebound = True
                    break
            if passed_a and not rebound:
                return True
    return False
