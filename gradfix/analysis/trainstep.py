"""Helpers shared by the training-step rules (GF103, GF104, GF201): literal values,
the statements that build the model and optimizer, the names that flow into the loss,
and the snippets the verifier's train-step check runs."""

from __future__ import annotations

import ast

import libcst as cst

from gradfix.analysis.flow import Flow, Kind
from gradfix.analysis.names import target_names
from gradfix.analysis.tree import children, contains
from gradfix.analysis.loops import TrainingLoop, backward_target, is_model_call, is_optimizer_step, _walk_calls


def literal_number(expr: cst.BaseExpression) -> float | None:
    """The value of `1e9`, `1_000_000_000`, `10 ** 9`, `(1e-6)`; None for anything else."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return float(ast.literal_eval(expr.value.replace("_", "")))
        except (ValueError, SyntaxError):
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        v = literal_number(expr.expression)
        if v is None:
            return None
        return -v if isinstance(expr.operator, cst.Minus) else v
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Power, cst.Multiply)):
        a, b = literal_number(expr.left), literal_number(expr.right)
        if a is None or b is None:
            return None
        try:
            return a ** b if isinstance(expr.operator, cst.Power) else a * b
        except OverflowError:
            return None
    return None


def torch_alias(flow: Flow) -> str | None:
    for local, full in flow.index.imports.aliases.items():
        if full == "torch":
            return local
    return None


def model_and_optimizer_setup(tl: TrainingLoop) -> tuple[str | None, str | None, float | None]:
    """Source lines that build the loop's model and optimizer at module level, the model's name, and lr.

    Only for loops in the module body, where those statements are plain top-level
    assignments the verifier can run; None otherwise.
    """
    flow = tl.flow
    if not isinstance(flow.scope, cst.Module) or tl.forward is None:
        return None, None, None
    model = None
    for call in _walk_calls(tl.forward.node):
        if is_model_call(call, flow) and isinstance(call.func, cst.Name):
            model = call.func.value
            break
    opt = None
    if tl.opt_step is not None:
        for call in _walk_calls(tl.opt_step.node):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step":
                if call.args and isinstance(call.args[0].value, cst.Name):
                    opt = call.args[0].value.value
                elif isinstance(call.func.value, cst.Name):
                    opt = call.func.value.value
                break
    if model is None or opt is None:
        return None, model, None
    lines = []
    lr = None
    for stmt in flow.scope.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                if name in (model, opt):
                    lines.append(cst.Module([]).code_for_node(small).strip())
                    if name == opt and isinstance(small.value, cst.Call):
                        for arg in small.value.args:
                            if arg.keyword is not None and arg.keyword.value == "lr":
                                lr = literal_number(arg.value)
    if len(lines) < 2:
        return None, model, None
    return "\n".join(lines), model, lr


def step_snippet(model: str, opt: str, extra_before_backward: str = "", term: str | None = None,
                 after_step: str = "", output_name: str | None = None) -> str:
    """One training step for the verifier: synthetic input, projected loss, backward, step.
    `output_name` is what the loop calls the model's output (`logits = model(x)`)."""
    lines = ["__gf_x = __gf_input()", f"__gf_out = {model}(__gf_x)", "__gf_l = __gf_loss(__gf_out)"]
    if output_name:
        lines.insert(2, f"{output_name} = __gf_out")
    if extra_before_backward:
        lines.append(extra_before_backward)
    if term is not None:
        lines.append(f"__gf_r = {term}")
        lines.append("__gf_l = __gf_l + (__gf_r if torch.is_tensor(__gf_r) else 0)")
    lines += [f"{opt}.zero_grad()", "__gf_l.backward()", f"{opt}.step()"]
    if after_step:
        lines.append(after_step)
    return "\n".join(lines)


def forward_output_name(tl: TrainingLoop) -> str | None:
    """`logits` in `logits = model(x)`, the forward statement of the loop."""
    node = tl.forward.node if tl.forward is not None else None
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
            and isinstance(node.value, cst.Call) and is_model_call(node.value, tl.flow):
        return node.targets[0].target.value
    return None


def optimizer_name(tl: TrainingLoop) -> str | None:
    if tl.opt_step is None:
        return None
    return _stepped(tl.opt_step.node)


def _stepped(node, flow: Flow | None = None) -> str | None:
    """`opt` in `opt.step()` / `scaler.step(opt)` (with `flow`, only a call that steps an optimizer)."""
    for call in _walk_calls(node):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step":
            if flow is not None and not is_optimizer_step(call, flow):
                continue
            if call.args and isinstance(call.args[0].value, cst.Name):
                return call.args[0].value.value
            if isinstance(call.func.value, cst.Name):
                return call.func.value.value
    return None


def optimizer_names(tl: TrainingLoop) -> list[str]:
    """Every optimizer this backward's update steps: the first step after it and the steps that
    follow in the same iteration before the next backward() (`loss.backward(); opt1.step();
    opt2.step()` in cross pseudo supervision trains both models from one loss), in order."""
    first = optimizer_name(tl)
    if first is None:
        return []
    names = [first]
    flow = tl.flow
    for s in tl.steps:
        if s.index <= tl.opt_step.index or isinstance(s.node, cst.BaseCompoundStatement):
            continue
        if any(backward_target(c, flow) is not None for c in _walk_calls(s.node)):
            break
        name = _stepped(s.node, flow)
        if name is not None and name not in names:
            names.append(name)
    return names


def names_in(expr: cst.CSTNode) -> set[str]:
    found = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            found.add(node.value)
            continue
        if kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)
            continue
        stack.extend(children(node))
    return found


def loss_expressions(tl: TrainingLoop, unpacked: bool = False) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
    """(statement, value) pairs whose value flows into the backpropagated loss, latest first.
    With `unpacked`, tuple targets count too (`out, aux = model(x)` when the loss reads `out`).
    A binding of a name that a later step rebinds on every path to the backward (not in a branch or an
    inner loop, not from the name itself) is not followed: it cannot be what the backward reads."""
    flow = tl.flow
    wanted = names_in(tl.loss)
    out: list[tuple[cst.CSTNode, cst.BaseExpression]] = [(tl.backward.node, tl.loss)]
    here = tl.backward
    settled: set[str] = set()   # names rebound on every path to the backward after any earlier step
    for st in reversed(flow.steps[: tl.backward.index]):
        node = st.node
        if st.no_grad:
            continue
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
            if unpacked:
                targets = [cst.Name(n) for t in targets for n in target_names(t)]
            if any(isinstance(t, cst.Name) and t.value in wanted - settled for t in targets):
                out.append((node, node.value))
                wanted |= names_in(node.value)
            if _surely_runs_before(flow.index, st, here):
                # `loss = (y_pred - y).pow(2).sum().item()` in an earlier notebook cell's loop never reaches
                # a backward whose own loop binds `loss = loss_fn(y_pred, y)` first
                settled |= {n for t in node.targets for n in target_names(t.target)} - names_in(node.value)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and \
                node.target.value in wanted - settled:
            out.append((node, node.value))
            wanted |= names_in(node.value)
    return out


def _surely_runs_before(index, st, backward) -> bool:
    """Step `st` (before the backward) runs on every path that reaches the backward, after every step before
    it: it sits in no loop, no branch and no part of a `try` statement (a body that may raise half-way, a
    handler) that the backward is not also in."""
    if not all(any(loop is m for m in backward.loops) for loop in st.loops) or \
            not set(st.branch) <= set(backward.branch):
        return False
    node, parent = st.node, index.parents.get(st.node)
    while parent is not None and parent is not backward.node:
        if isinstance(parent, (cst.Try, cst.TryStar)) and not contains(node, backward.node):
            return False
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            break
        node, parent = parent, index.parents.get(parent)
    return True


def kinds_of(flow: Flow, name: str) -> set[Kind]:
    return {b.kind for b in flow.bindings if b.name == name}


def _named_bindings(flow: Flow, name: str) -> list:
    """The non-parameter bindings among those of `name` that the scope reads (a parameter shadows
    the module's name and has no value to follow)."""
    return [b for b in flow.visible_bindings(name) if not b.is_param]


def _dotted(expr) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr.value}" if head else None
    return None


def _string_value(expr, flow: Flow, depth: int) -> str | None:
    """A string literal, or a name bound (only) to one: `reduction = "sum"`."""
    if isinstance(expr, cst.SimpleString):
        try:
            v = ast.literal_eval(expr.value)
        except (ValueError, SyntaxError):
            return None
        return v if isinstance(v, str) else None
    if isinstance(expr, cst.Name) and depth < 3:
        values = {_string_value(b.value, flow, depth + 1) for b in _named_bindings(flow, expr.value)
                  if isinstance(b.value, cst.BaseExpression)}
        return values.pop() if len(values) == 1 else None
    return None


def _sums_by_arguments(call: cst.Call, flow: Flow, depth: int) -> bool:
    """`reduction="sum"` / `reduction="none"` (per-element) or the legacy `size_average=False` / `reduce=False`."""
    for a in call.args:
        if a.keyword is None:
            continue
        key = a.keyword.value
        if key == "reduction" and _string_value(a.value, flow, depth) in ("sum", "none"):
            return True
        if key in ("size_average", "reduce") and isinstance(a.value, cst.Name) and a.value.value == "False":
            return True
    return False


def sum_reduced(expr: cst.BaseExpression, flow: Flow, depth: int = 0) -> bool:
    """The expression is a loss summed over its elements (not averaged), as far as the file shows:
    `F.cross_entropy(..., reduction="sum")`, `criterion(...)` for a criterion built with
    `reduction="sum"` (or `size_average=False`), `per_token.sum()` / `torch.sum(...)`, a name bound
    to one of those, or a sum or product with such a term. Dividing such a loss by a literal token
    or batch count makes it a mean; it is not a loss scale."""
    if depth > 4 or expr is None:
        return False
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            return sum_reduced(expr.left, flow, depth + 1) or sum_reduced(expr.right, flow, depth + 1)
        return False
    if isinstance(expr, cst.UnaryOperation):
        return sum_reduced(expr.expression, flow, depth + 1)
    if isinstance(expr, cst.Name):
        b = flow.load_binding.get(id(expr))
        if b is not None:
            if any(isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign) and
                   sum_reduced(n.value, flow, depth + 1) for _i, n in b.mutations):
                return True                               # `loss = 0` then `loss += ce_sum`
            if b.is_param or not isinstance(b.value, cst.BaseExpression):
                return False
            return b.value is not expr and sum_reduced(b.value, flow, depth + 1)
        return any(isinstance(b.value, cst.BaseExpression) and sum_reduced(b.value, flow, depth + 1)
                   for b in _named_bindings(flow, expr.value))
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("sum", "nansum"):
        return True                                   # `per_token.sum()`, `torch.sum(x)`
    if _sums_by_arguments(expr, flow, depth):
        return True                                   # `F.cross_entropy(..., reduction="sum")`
    name = _dotted(func)
    if name is not None and "." not in name.replace("self.", "", 1):
        # `criterion(out, y)` with `criterion = nn.CrossEntropyLoss(reduction="sum")` (or a partial of one)
        for b in _named_bindings(flow, name):
            if isinstance(b.value, cst.Call) and _sums_by_arguments(b.value, flow, depth + 1):
                return True
    return False
