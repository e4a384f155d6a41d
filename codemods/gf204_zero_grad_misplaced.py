"""GF204 zero-grad-misplaced: `zero_grad()` between `backward()` and `optimizer.step()`, or one that wipes
the gradients an accumulation window (batches or micro-batches) is still collecting."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.expressions import code_of, function_ops
from gradfix.analysis.flow import Kind
from gradfix.analysis.names import qualname
from gradfix.analysis.tree import children, walk
from gradfix.analysis.iteration import iterations
from gradfix.analysis.iteration_events import flag_excludes
from gradfix.analysis.loopedits import Op, compose, moved, same_block, single, train_loop_contract
from gradfix.model import Safety
from gradfix.rule import Rule, RuleDocs


def zeroes_optimizer(it, z, step) -> bool:
    """Does zero_grad event `z` clear the gradients that `step`'s optimizer is about to use?"""
    target = z.info.get("target")
    if target == "opt":
        return z.recv == step.recv
    root = z.recv
    if target == "none":
        # `p.grad = None` / `p.grad.zero_()` in `for p in <X>.parameters()`
        loops = [n for n in z.nested if isinstance(n, cst.For) and isinstance(n.target, cst.Name)
                 and n.target.value == (z.recv or "").split(".")[0]]
        if not loops:
            return False
        it_src = code_of(loops[-1].iter)
        if step.recv and re.search(rf"(?<![\w.]){re.escape(step.recv)}\b", it_src):
            return True
        m = re.match(r"^([\w.]+)\.(parameters|named_parameters)\(\)$", it_src)
        if not m:
            return False
        root = m.group(1)
    b = it.optimizer_binding(step.recv) if step.recv else None
    if b is None or not b.value.args:
        return False
    params_src = code_of(b.value.args[0].value)
    return bool(root) and re.search(rf"(?<![\w.]){re.escape(root)}\b", params_src) is not None


class ZeroGradMisplaced(Rule):
    id = "GF204"
    name = "zero-grad-misplaced"
    summary = "zero_grad() runs between backward() and optimizer.step(), so the step sees no gradients"
    docs = RuleDocs(
        what=(
            "Finds `optimizer.zero_grad()`, `model.zero_grad()` or `p.grad = None` / `p.grad.zero_()` over the "
            "optimizer's parameters that runs after `loss.backward()` and before the `optimizer.step()` that follows "
            "it, in the same iteration. A zero_grad of another optimizer or model (clearing a discriminator's "
            "gradients before the generator's step), one followed by another backward before the step, and one after "
            "a backward whose loss is made only of tensors built in view from literals (`w = torch.tensor([1.], "
            "requires_grad=True)`, arithmetic on them: a tutorial's autograd demo) when the optimizer holds a "
            "module's `.parameters()` that none of them is, are left alone: that backward filled no gradient the "
            "step reads. With gradient accumulation (backward every batch, `optimizer.step()` only under `if (i + 1) % k "
            "== 0:`), it also finds a zero_grad of those parameters that runs every batch, outside the condition "
            "(after the step, or before the forward pass): it clears the accumulated gradients before the step "
            "uses them (left alone when a second backward runs before that step and may feed it; a backward after "
            "the step, a second model's with its own optimizer, does not excuse the clear). Two more accumulation shapes: a zero_grad inside an inner (micro-batch) loop whose every "
            "pass runs backward(), when the step comes after that loop (each pass wipes the passes before it), unless "
            "the epoch loop reads or writes `.grad` (per-task gradients combined by hand), also split between methods: "
            "a method whose first statements clear `self.opt` and whose body runs backward() without a step, called "
            "by a loop of the file on an instance of its class (`trainer = Trainer()`; `for mb in micro: "
            "trainer.forward_backward(mb)`) when the statement right after that loop is the call of a sibling "
            "method that steps `self.opt` (`trainer.optim_step()`); left alone when the loop steps itself, or the "
            "receiver is not shown to be that class; and a zero_grad at the "
            "start of the epoch loop when the batch loop steps under a single window test (`(i + 1) % k == 0`, "
            "`ni - last_step >= accumulate`) with its own clear after the step and nothing steps the remainder "
            "after the batch loop: it discards the batches after the epoch's last full window (a test joined with "
            "`or i + 1 == len(loader)` flushes them and is left alone). Also a clear under `if <test>:` before the backward when the step "
            "runs under a second `if` with the very same accumulation test after it (`if i % k == 0: "
            "opt.zero_grad()` at the top, `if i % k == 0: opt.step()` at the bottom): each step iteration wipes "
            "the window just before its own backward (left alone when anything in the iteration rebinds a name of "
            "the test, such as a counter incremented between the two ifs, or when the tests differ, as a clear at "
            "the window's start, `i % k == 0`, and a step at its end, `(i + 1) % k == 0`, do; detect only). "
            "A step under any other condition (`if torch.isfinite(loss):` skipping a bad batch, where "
            "clearing every batch is right) is left alone, and so is a clear in a block that sets a flag "
            "(`drop = True`, a loss-spike guard discarding the window's gradients) when the step runs only under "
            "a test that needs the flag false (`if not drop:`, `not drop and ...`, or the `else` of `if drop:`) "
            "and nothing rebinds the flag between the clear and that test: the two never run in the same "
            "iteration (a flag reset in between, `drop = False` before `if not drop:`, still reports)."
        ),
        why=(
            "The optimizer step reads the gradients just cleared: every update is zero (with `set_to_none=True`, the "
            "default since torch 2.0, the step skips every parameter), so grad_norm is always 0 and the loss never "
            "moves. Momentum and weight decay keep nudging the weights, which hides the problem."
        ),
        example="logits = model(x)\nloss = loss_fn(logits, y)\nloss.backward()\noptimizer.zero_grad()\noptimizer.step()",
        fixed_example="optimizer.zero_grad()\nlogits = model(x)\nloss = loss_fn(logits, y)\nloss.backward()\noptimizer.step()",
        fix=(
            "Moves the zero_grad line before the iteration's forward pass (the statement of its block that holds "
            "the first model call), or removes it when the iteration already clears the same gradients before. "
            "Offered when the call stands alone on its line in the block of the forward pass; otherwise reported "
            "without a fix. The accumulation case is detect only: moving the clear inside the condition is the "
            "fix, but the train-loop check's canonical order keeps an unconditional zero_grad, so it cannot "
            "confirm it yet. The micro-batch (also split between methods) and epoch-start cases are detect only too."
        ),
        fix_safety="Unsafe: the updates go from zero to the real gradient step, on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202): the gradients seen by each optimizer step and the parameters after it, on a "
            "synthetic model; `fixes-hazard` when the rewrite follows the canonical order (zero_grad before the "
            "forward pass, or after the step) and the original (every step sees no gradient) does not."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            b, step = it.backward, it.step_event()
            if b is not None and step is None:
                for z, outer in _per_micro_batch(it, b):
                    if id(z.node) in seen:
                        continue
                    seen.add(id(z.node))
                    message = (f"`{z.recv}.zero_grad()` runs on every pass of this inner loop, but "
                               f"`{outer.recv}.step()` only after the loop: each pass clears the gradients of the "
                               f"passes before it, so the step sees the last micro-batch's gradient alone; clear "
                               f"them once before the inner loop (or after the step)")
                    yield ctx.finding(z.node, message, None)
            if b is not None and step is None and it.loop is None:
                for z, loop, stepper in _cleared_per_method_call(it, b):
                    if id(z.node) in seen:
                        continue
                    seen.add(id(z.node))
                    yield ctx.finding(z.node, (
                        f"`{z.recv}.zero_grad()` runs on every call of `{it.scope.name.value}()`, which the loop on "
                        f"line {ctx.index.position(loop).start.line} calls once per pass, while `{stepper}()` steps only after "
                        f"that loop: each call clears the gradients of the calls before it, so the step sees the "
                        f"last call's gradient alone; clear them once before the loop (or after the step)"), None)
            if b is None or step is None:
                continue
            for z, test in _epoch_start_drops_tail(it, b, step):
                if id(z.node) in seen:
                    continue
                seen.add(id(z.node))
                message = (f"`{z.recv}.zero_grad()` at the start of each epoch clears the gradients the last "
                           f"batches of the previous epoch accumulated: `{step.recv}.step()` runs only when "
                           f"`{code_of(test)}`, so whenever the epoch's batch count is not a multiple of the window "
                           f"those batches' backward() passes never reach a step; remove this clear (the window's "
                           f"own clear after the step is enough) or step the remainder at the end of the epoch")
                yield ctx.finding(z.node, message, None)
            for z in it.between(b, step, "zero_grad"):
                if id(z.node) in seen or not z.compatible(step):
                    continue
                if not zeroes_optimizer(it, z, step):
                    continue
                if flag_excludes(z, step, it.loop.body if it.loop is not None else it.scope):
                    continue  # the clear sets `skip = True`, the step runs under `if not skip:`
                if [x for x in it.between(z, step, "backward")]:
                    continue  # a later backward refills the gradients before the step
                if _scratch_loss(it, b, step):
                    continue  # the backward filled no gradient this optimizer holds
                seen.add(id(z.node))
                what = code_of(z.small) if z.info.get("target") == "none" else f"{z.recv}.zero_grad()"
                message = (f"`{what}` runs after backward() and before `{step.recv}.step()`: the step sees no "
                           f"gradients, so every update is zero and grad_norm is always 0; clear the gradients before "
                           f"the forward pass (or after the step)")
                yield ctx.finding(z.node, message, self._fix(ctx, it, z, b, step))
            for z, test in self._cleared_under_step_test(it, b, step):
                if id(z.node) in seen:
                    continue
                seen.add(id(z.node))
                message = (f"`{z.recv}.zero_grad()` runs when `{code_of(test)}`, before this iteration's "
                           f"backward(), and `{step.recv}.step()` runs under the same test after it: on every step "
                           f"iteration the gradients accumulated since the last step are cleared just before they "
                           f"would be used, so each step sees one batch's gradient; clear them after the step "
                           f"instead (inside the step's `if`)")
                yield ctx.finding(z.node, message, None)
            for z, test in self._wipes_accumulation(it, b, step):
                if id(z.node) in seen:
                    continue
                seen.add(id(z.node))
                what = code_of(z.small) if z.info.get("target") == "none" else f"{z.recv}.zero_grad()"
                message = (f"`{what}` runs every batch, but `{step.recv}.step()` only when `{code_of(test)}`: the "
                           f"gradients accumulated over the batches in between are cleared before the step uses "
                           f"them, so each step sees the last batch's gradient alone (and, with the loss divided by "
                           f"the accumulation count, that much smaller); clear them inside the condition, after the "
                           f"step")
                yield ctx.finding(z.node, message, None)

    def _cleared_under_step_test(self, it, b, step):
        """A clear of the stepped parameters under `if <test>:` before the backward, where the step runs under
        a second `if <test>:` with the very same accumulation test after it (`if i % k == 0: opt.zero_grad()` at
        the top, `if i % k == 0: opt.step()` at the bottom) and nothing in the iteration rebinds the test's
        names: on each step iteration the clear wipes the window just before that iteration's backward, so the
        step uses one batch. (zero_grad event, the test)."""
        if b.path or b.nested or b.info.get("exits") or len(step.path) != 1 or step.nested:
            return []
        node, branch = step.path[0]
        if not isinstance(node, cst.If) or branch != 0 or not _accumulation_test(node.test):
            return []
        if any(x.op == "backward" and x is not b and x.compatible(step) for x in it.events):
            return []
        text = code_of(node.test)
        names = {n.value for n in walk(node.test) if isinstance(n, cst.Name)}
        body = it.loop.body if it.loop is not None else it.scope
        for n in walk(body):
            targets = []
            if isinstance(n, cst.Assign):
                targets = [t.target for t in n.targets]
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
                targets = [n.target]
            elif isinstance(n, (cst.For, cst.CompFor)) and n is not it.loop:
                targets = [n.target]
            if any(isinstance(x, cst.Name) and x.value in names for t in targets for x in walk(t)):
                return []  # the test's value may change between the two ifs
        out = []
        for z in it.events:
            if z.op != "zero_grad" or z.order > b.order or len(z.path) != 1 or z.nested or z.info.get("exits"):
                continue
            znode, zbranch = z.path[0]
            if znode is node or not isinstance(znode, cst.If) or zbranch != 0 or code_of(znode.test) != text:
                continue
            if zeroes_optimizer(it, z, step):
                out.append((z, node.test))
        return out

    def _wipes_accumulation(self, it, b, step):
        """Unconditional clears of the stepped parameters in an iteration whose backward runs every batch but
        whose step runs only under an accumulation test (`(i + 1) % k == 0`): (zero_grad event, the test)."""
        if b.path or b.nested or b.info.get("exits") or not step.path or step.nested:
            return []
        node, branch = step.path[0]
        if not isinstance(node, cst.If) or branch != 0 or not _accumulation_test(node.test):
            return []
        if any(x.op == "backward" and x is not b and x.compatible(step) and x.order < step.order for x in it.events):
            return []  # more than one backward feeds this step
        out = []
        for z in it.events:
            if z.op != "zero_grad" or z.path or z.nested or z.info.get("exits"):
                continue
            if not zeroes_optimizer(it, z, step):
                continue
            out.append((z, node.test))
        return out

    def _fix(self, ctx, it, z, b, step):
        if not single(z.line) or z.nested or z.path != b.path:
            return None
        earlier = [x for x in it.events if x.op == "zero_grad" and x.order < b.order and x.compatible(b)
                   and not x.path and zeroes_optimizer(it, x, step)]
        if earlier:
            edits = compose([Op(z.line, remove=True)])
            desc = f"remove the misplaced `{code_of(z.small)}` (the gradients are already cleared earlier)"
        else:
            anchor = it.forward_anchor(z.line)
            if anchor is None or not same_block(ctx.index, anchor, z.line) or not isinstance(anchor, cst.CSTNode):
                return None
            edits = compose([Op(z.line, remove=True), Op(anchor, before=[moved(z.line)])])
            desc = f"move `{code_of(z.small)}` before the forward pass"
        return ctx.fix(desc, edits, Safety.UNSAFE, train_loop_contract(it))


def _scratch_loss(it, b, step) -> bool:
    """The backward's loss is made only of tensors built in view from literals (`w = torch.tensor([1.],
    requires_grad=True)`, arithmetic on them), and the stepped optimizer holds a module's `.parameters()`
    that none of them is: a tutorial's autograd demo before a demo of the optimizer's calls. Its backward
    fills the scratch tensors' `.grad` alone, so the clear before the step loses nothing. Any other call,
    attribute, parameter or unbound name in the loss's making may reach the model: not shown."""
    call = b.node
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return False
    opts = it.bindings(step.recv) if step.recv else []
    if not opts:
        return False
    for opt in opts:  # every optimizer the name is bound to holds a module's parameters
        held = opt.value.args[0].value if isinstance(opt.value, cst.Call) and opt.value.args else None
        if opt.kind is not Kind.OPTIMIZER or not (
                isinstance(held, cst.Call) and isinstance(held.func, cst.Attribute)
                and held.func.attr.value in ("parameters", "named_parameters")):
            return False
    imports = it.index.imports
    names: set[str] = set()
    todo: list[cst.CSTNode] = [call.func.value]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Call):
            if qualname(node.func, imports) not in torchapi.TENSOR_FACTORIES:
                return False
            todo.extend(a.value for a in node.args)
        elif isinstance(node, cst.Attribute):
            return False  # `model.weight`, `out.logits`: may be the model's
        elif isinstance(node, cst.Name):
            if node.value in names or node.value in ("True", "False", "None"):
                continue
            bs = it.flow.visible_bindings(node.value)
            if not bs or any(x.is_param or not isinstance(x.value, cst.BaseExpression) for x in bs):
                return False
            names.add(node.value)
            todo.extend(x.value for x in bs)
        elif isinstance(node, (cst.BaseNumber, cst.BaseString)):
            continue
        elif isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.List, cst.Tuple, cst.Element,
                               cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice)):
            todo.extend(children(node))
        elif not isinstance(node, (cst.BaseBinaryOp, cst.BaseUnaryOp, cst.LeftParen, cst.RightParen,
                                   cst.Comma, cst.LeftSquareBracket, cst.RightSquareBracket)):
            return False
    return not any(names & {n.value for n in walk(opt.value) if isinstance(n, cst.Name)} for opt in opts)


def _cleared_per_method_call(it, b):
    """`def forward_backward(self, mb): self.opt.zero_grad(); ...; loss.backward()` (no step) and a sibling
    method that steps the same optimizer (`def optim_step(self): self.opt.step()`), with a loop of the file
    that calls `trainer.forward_backward(...)` on every pass, `trainer` bound only to an instance of the class,
    and `trainer.optim_step()` the statement right after the loop: (clear, loop, `trainer.optim_step`)."""
    index, fn = it.index, it.scope
    cls = index.enclosing_class(fn) if isinstance(fn, cst.FunctionDef) else None
    if cls is None or index.method(cls, fn.name.value) is not fn:
        return []
    z = next((e for e in it.events if e.op == "zero_grad" and e.order < b.order), None)
    if z is None or z.path or z.nested or not (z.recv or "").startswith("self.") or \
            any(e.op in ("step", "opaque", "helper") for e in it.events):
        return []
    steppers = [m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m is not fn and
                re.search(rf"(?<![\w.]){re.escape(z.recv)}\.step\(", code_of(m)) and
                not ({"backward", "zero_grad"} & function_ops(index, m))]
    out = []
    for stepper in steppers:
        for loop in walk(index.module):
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            scope = index.enclosing(loop, (cst.FunctionDef,)) or index.module
            flow = index.flow(scope)
            block = index.parents.get(loop)
            body = getattr(block, "body", None)
            if not isinstance(body, (list, tuple)) or not any(s is loop for s in body):
                continue
            k = next(i for i, s in enumerate(body) if s is loop)
            nxt = body[k + 1] if k + 1 < len(body) else None
            for stmt in _body_lines(loop):
                call = _method_call(stmt, fn.name.value)
                recv = call.func.value.value if call is not None else None
                if recv is None or not _instance_of(index, flow, recv, cls.name.value):
                    continue
                if ".step(" in code_of(loop.body) or f"{recv}.{stepper.name.value}(" in code_of(loop.body):
                    continue
                after = _method_call(nxt, stepper.name.value) if nxt is not None else None
                if after is not None and after.func.value.value == recv:
                    out.append((z, loop, f"{recv}.{stepper.name.value}"))
                    break
    return out


def _body_lines(loop) -> list:
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else []
    return [s for s in body if isinstance(s, cst.SimpleStatementLine)]


def _method_call(stmt, name: str):
    """The call `X.name(...)` that the one-statement line `stmt` makes (as an expression or an assigned value),
    with `X` a plain name."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            value.func.attr.value == name and isinstance(value.func.value, cst.Name):
        return value
    return None


def _instance_of(index, flow, name: str, cls: str) -> bool:
    """Every binding of `name` the scope sees is a call of the class `cls` (`trainer = RLTrainer()`)."""
    bs = flow.visible_bindings(name)
    return bool(bs) and all(isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Name)
                            and b.value.func.value == cls for b in bs)


def _per_micro_batch(it, b):
    """(zero_grad, step) for an unconditional clear inside an inner loop whose every pass runs backward(),
    when the optimizer steps only after that loop (`for micro in batch.chunk(k): opt.zero_grad(); ...;
    loss.backward()` then `opt.step()`): each pass wipes the previous passes' gradients. Left alone when the
    epoch loop reads or writes `.grad` (per-task gradients collected and combined by hand) or hands the
    optimizer to a function."""
    if it.epoch_loop is None or b.path or b.nested or b.info.get("exits"):
        return []
    if any(e.op in ("step", "helper", "opaque") for e in it.events):
        return []
    steps = [e for e in it.epoch_events if e.op == "step" and e.info.get("where") == "end"]
    if len(steps) != 1 or any(e.op in ("helper", "opaque") for e in it.epoch_events):
        return []
    if any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in walk(it.epoch_loop)):
        return []
    step = steps[0]
    return [(z, step) for z in it.events if z.op == "zero_grad" and not z.path and not z.nested
            and not z.info.get("exits") and zeroes_optimizer(it, z, step)]


def _epoch_start_drops_tail(it, b, step):
    """(zero_grad, window test) for a clear at the start of the epoch loop's body when the batch loop
    accumulates over a window (backward every batch, `if <window test>: opt.step(); opt.zero_grad()`) and
    nothing steps the remainder after the batch loop: the next epoch's clear discards it. A test joined with
    `or` (`... or i == len(loader) - 1`, the last batch steps too) flushes the remainder and is left alone."""
    if it.epoch_loop is None or b.path or b.nested or b.info.get("exits") or len(step.path) != 1 or step.nested:
        return []
    node, branch = step.path[0]
    if not isinstance(node, cst.If) or branch != 0 or not _window_test(node.test):
        return []
    window_clear = [z for z in it.events if z.op == "zero_grad" and z.order > step.order and len(z.path) == 1
                    and z.path[0][0] is node and z.path[0][1] == 0 and zeroes_optimizer(it, z, step)]
    if not window_clear or any(z.op == "zero_grad" and not z.path for z in it.events):
        return []
    if any(e.op in ("step", "helper", "opaque") and e.info.get("where") == "end" for e in it.epoch_events):
        return []
    return [(z, node.test) for z in it.epoch_events if z.op == "zero_grad" and z.info.get("where") == "start"
            and not z.path and not z.nested and zeroes_optimizer(it, z, step)]


def _window_test(test) -> bool:
    """A single accumulation test: `(i + 1) % k == 0`, or a comparison with an accumulation count
    (`ni - last_opt_step >= accumulate`); not one joined with `or`/`and`."""
    if isinstance(test, cst.BooleanOperation):
        return False
    if _accumulation_test(test):
        return True
    return isinstance(test, cst.Comparison) and re.search(r"accum", code_of(test), re.I) is not None


def _accumulation_test(test) -> bool:
    """`(i + 1) % k == 0`, `step % k == 0`, `not (i + 1) % k`, alone or joined with `or` / `and` (the last batch
    of the epoch also steps): a step that runs on some batches only, every k-th."""
    if isinstance(test, cst.BooleanOperation):
        return _accumulation_test(test.left) or _accumulation_test(test.right)
    mod = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.Equal):
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(right, cst.Integer) and right.value == "0":
            mod = left
        elif isinstance(left, cst.Integer) and left.value == "0":
            mod = right
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        mod = test.expression
    return isinstance(mod, cst.BinaryOperation) and isinstance(mod.operator, cst.Modulo) and \
        not (isinstance(mod.right, cst.Integer) and mod.right.value == "1")


RULE = ZeroGradMisplaced
