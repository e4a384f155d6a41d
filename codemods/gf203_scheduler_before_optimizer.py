"""GF203 scheduler-before-optimizer: `scheduler.step()` runs before `optimizer.step()` in the same iteration."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.callgraph import argument_for
from gradfix.analysis.flow import Kind
from gradfix.analysis.iteration import _body, iterations
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.tree import walk
from gradfix.analysis.schedules import (
    is_torch_scheduler, own_scheduler_classes, passed_torch_scheduler, scheduler_info,
)
from gradfix.analysis.loopedits import (
    Op, block_lines, compose, epoch_end_anchor, mentions, moved, same_block, single, train_loop_contract,
)
from gradfix.model import Safety
from gradfix.rule import Rule, RuleDocs


class SchedulerBeforeOptimizer(Rule):
    id = "GF203"
    name = "scheduler-before-optimizer"
    summary = "The learning-rate scheduler is stepped before the optimizer in the same iteration"
    docs = RuleDocs(
        what=(
            "Finds `scheduler.step()` that runs before the iteration's `optimizer.step()` (or `scaler.step(optimizer)`): "
            "earlier in the batch loop's body, or at the start of the epoch loop's body before the batch loop (the "
            "backward may sit in apex's `with amp.scale_loss(loss, optimizer) as scaled_loss:` block). The "
            "scheduler is one built in the file on that optimizer, or, when its type is not known, a `*sched*` name "
            "in a loop that steps a single optimizer (also bound to what a function gradfix cannot see returns, when "
            "it is handed the optimizer: `scheduler = get_scheduler(optimizer, cfg)`). Also an epoch loop whose "
            "body steps a torch scheduler built on the optimizer, on a line of its own, before the line that calls a "
            "function of the file whose training loop steps that optimizer (`scheduler.step(); train(model, "
            "loader, optimizer)`, or `scheduler.step(); train()` with a `train()` that steps the module's own optimizer, "
            "unless a call before the epoch loop trains first; reported without a fix; the same two lines in a branch of the epoch loop too, "
            "`else: joint_sched.step(); train(model, loader, joint_opt)` after warm-up epochs on another optimizer, "
            "when the loop names that optimizer nowhere outside the branch and nothing before the loop but its "
            "`torch.optim` constructors does: the first pass through the branch steps the schedule before any update, "
            "whatever epoch it comes at; where another branch or earlier code trains the same optimizer, a test on "
            "the epoch may be the skip-the-first-epoch idiom and it is left alone), and a function with no epoch loop of its own, called "
            "somewhere in the project, whose first statements step a torch scheduler built on the optimizer its "
            "batch loop steps (`def train(net, loader, ep): lr_scheduler.step(); for x, y in loader: ...`; "
            "also when both are parameters of the function, `def train(epoch, loader, model, optimizer, "
            "scheduler)`, and every call of it in the file passes a name bound to a torch scheduler built on the "
            "very optimizer it passes; a call passing anything else, or none in the file, leaves it alone; "
            "reported without a fix; left alone under a test of anything but the scheduler, `if ep > 0:`, and "
            "when nothing calls the function); and a loop whose backward runs in an inner loop (once per network "
            "of an ensemble, per micro-batch) with the optimizer stepped once after that inner loop, when the "
            "pass steps a torch scheduler on it first (reported without a fix; left alone under a test of the "
            "loop's variables other than `i == 0` / `i % k == 0`, such as `if rnd > 0:`); and an epoch loop that steps a "
            "torch scheduler on a line of its own before its batch loop, whose body calls a function of the file with "
            "no loop that steps, unconditionally, the optimizer the scheduler is built on (a module-level one it reads "
            "and the caller does not rebind, or the one it is given): `for ep in ...: sched.step(); for b in loader: "
            "train_sample(b)` (reported without a fix; left alone when the caller binds a local optimizer of the same "
            "name, when a statement before the epoch loop calls the helper, a warm-up that steps first, and when "
            "the epoch loop names the optimizer outside the batch loop). An epoch-start step inside a branch counts too (`else: "
            "scheduler.step()` after `if isinstance(scheduler, ReduceLROnPlateau):`, `if args.flag:`), as long as "
            "no condition on its way reads the epoch. `ReduceLROnPlateau`, `scheduler.step(value)`, a scheduler in "
            "a branch exclusive with the optimizer step (`if`/`else`), and an epoch-start step under a condition on "
            "the epoch are left alone: `if epoch > 0: scheduler.step()` (or the `else:` of `if epoch == 0:`) skips "
            "the first epoch, which is the same as stepping at the end of the previous one; a branch that "
            "`continue`s (fast-forwarding a resumed schedule) trains no batch. Also left alone: a project's own "
            "scheduler class (built in view from a class that is not a torch `LRScheduler` subclass), whose "
            "`step()` may be meant to run before the update (a warm-up that writes the next lr into the groups; "
            "PyTorch neither warns nor skips a value), and a scheduler of unknown class (a function parameter) "
            "when the file defines or imports a scheduler class of its own (`from scheduler import "
            "CycleScheduler`): it may be that one. A parameter with no such class in view is still taken for a "
            "torch scheduler. A closure's free name (`def train_step(): lr_sched.step(); ...; optimizer.step()` nested "
            "in `main`) bound in the enclosing function to anything but a torch scheduler's construction (a "
            "project factory, `optimizer, lr_sched, wd_sched = init_opt(...)`, returning plain objects) is left "
            "alone, and so is a step in a block that ends in `return`/`raise` before any optimizer step of a later "
            "block (`if 'A' in name: ...; scheduler.step(); return loss` then a separate `if 'B' in name:` block): "
            "on that path the later step never runs."
        ),
        why=(
            "Since PyTorch 1.1 the scheduler must step after the optimizer: stepping it first skips the first value of "
            "the schedule (the first update uses lr 0.1 instead of 1.0 for a 10x decay) and shifts every later one; "
            "PyTorch warns at run time (pytorch #20124). With a warm-up schedule the first steps run at the wrong "
            "learning rate."
        ),
        example=(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss_fn(model(x), y).backward()\n"
            "    scheduler.step()\n    optimizer.step()"
        ),
        fixed_example=(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss_fn(model(x), y).backward()\n"
            "    optimizer.step()\n    scheduler.step()"
        ),
        fix=(
            "Swaps them when both sit alone on their lines in one block: the scheduler line moves right after the "
            "optimizer step (after `scaler.update()` when that follows). A scheduler stepped at the start of the epoch "
            "loop moves to the end of the epoch loop's body (not when it sits in a branch: reported without a fix). "
            "Nothing between them may read the learning rate. When "
            "the scheduler is epoch-based and stepped per batch, GF202's fix (move it to the epoch loop) applies "
            "instead and this finding has no fix of its own."
        ),
        fix_safety="Unsafe: the learning rate of every step changes (by one schedule position). Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202): the lr seen by each optimizer step, with gradients and parameters, on a "
            "synthetic model; `fixes-hazard` when the rewrite follows the canonical order (step, then scheduler) "
            "and the original's lr trace does not follow the declared schedule."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            b = it.backward
            step = it.step_event()
            if b is None or step is None:
                continue
            candidates = [e for e in it.events if e.op == "sched" and e.order < step.order and e.compatible(step)
                          and e.compatible(b) and not e.nested]
            candidates += [e for e in it.epoch_events if e.op == "sched" and e.info.get("where") == "start"
                           and not e.nested and _may_run_in_first_epoch(e)]
            for e in candidates:
                if e.info.get("args") or id(e.node) in seen:
                    continue
                info = scheduler_info(it, e.recv)
                if info.kind == "plateau":
                    continue
                if info.ctor is not None and not is_torch_scheduler(it.index, info.ctor):
                    continue  # a project's own scheduler class: its `step()` may be meant to run first
                if info.ctor is None and own_scheduler_classes(it.index):
                    continue  # not shown (a parameter), and the file builds or imports a scheduler of its own
                if info.optimizer is not None and info.optimizer != step.recv:
                    continue
                if info.ctor is None and len(it.optimizers_stepped()) != 1:
                    continue
                if info.ctor is None and _built_outside_torch(it, e.recv):
                    continue  # a closure's free name the enclosing function binds from a project factory
                if _returns_before(it.index, e.line, step.node):
                    continue  # the scheduler's block returns: the later block's step never follows it
                seen.add(id(e.node))
                in_epoch = e in it.epoch_events
                opt = step.recv
                where = "at the start of each epoch, before the batch loop's" if in_epoch else "before"
                if in_epoch and e.path:
                    where = "in a branch at the start of the epoch, before the batch loop's"
                message = (f"`{e.recv}.step()` runs {where} `{opt}.step()`: the first value of the schedule is skipped "
                           f"and every later step uses the next one (PyTorch warns: call optimizer.step() before "
                           f"lr_scheduler.step())")
                fix = None
                if info.kind == "epoch" and not in_epoch and it.epoch_loop is not None:
                    message += "; GF202 moves it to the end of the epoch loop"
                else:
                    fix = self._epoch_fix(ctx, it, e) if in_epoch else self._swap_fix(ctx, it, e, step)
                yield ctx.finding(e.node, message, fix)
        yield from self._before_inner_loop_step(ctx, seen)
        yield from self._function_start(ctx, seen)
        yield from self._before_training_helper(ctx, seen)
        yield from self._before_batch_helper(ctx, seen)

    def _before_inner_loop_step(self, ctx, seen: set[int]):
        """`for x in batches: sched.step(); for net in nets: loss.backward()` then `opt.step()` after that inner
        loop: the backward's own loop steps nothing, the enclosing loop's pass steps the optimizer once after
        it, and a torch scheduler stepped at the top of that pass comes first. Reported without a fix."""
        for it in iterations(ctx.index):
            if it.backward is None or it.step_event() is not None or it.epoch_loop is None:
                continue
            step = next((e for e in it.epoch_events if e.op == "step" and e.info.get("where") == "end"
                         and not e.nested and not e.path), None)
            if step is None or any(e.op == "step" and e.info.get("where") == "start" for e in it.epoch_events):
                continue
            for e in it.epoch_events:
                if e.op != "sched" or e.info.get("where") != "start" or e.nested or e.info.get("args") or \
                        id(e.node) in seen or not _may_run_in_first_epoch(e) or \
                        not _runs_in_first_pass(e, it.epoch_loop):
                    continue
                if not _steps_torch_schedule_of(it, e, step):
                    continue
                seen.add(id(e.node))
                yield ctx.finding(e.node, (
                    f"`{e.recv}.step()` runs at the start of each pass of this loop, before the `{step.recv}.step()` "
                    f"that follows its inner backward loop: the first value of the schedule is skipped and every "
                    f"later step uses the next one (PyTorch warns: call optimizer.step() before "
                    f"lr_scheduler.step())"), None)

    def _function_start(self, ctx, seen: set[int]):
        """`def train(net, loader, ep): lr_scheduler.step(); for x, y in loader: ... optimizer.step()`: a
        function with no epoch loop of its own (its caller loops over epochs) steps a torch scheduler built on
        the optimizer first, before its batch loop. Reported without a fix: where the function's epoch ends
        is its caller's business."""
        for it in iterations(ctx.index):
            step = it.step_event()
            if it.backward is None or step is None or it.epoch_loop is not None or it.loop is None or \
                    not isinstance(it.scope, cst.FunctionDef) or not _called(ctx.index, it.scope):
                continue
            for e in _function_start_events(it):
                if e.op != "sched" or e.nested or e.info.get("args") or id(e.node) in seen or \
                        not _guarded_only_by(e, e.recv):
                    continue
                if not _steps_torch_schedule_of(it, e, step) and not _passed_schedule_of(it, e, step):
                    continue
                seen.add(id(e.node))
                yield ctx.finding(e.node, (
                    f"`{e.recv}.step()` runs at the start of `{it.scope.name.value}()`, before its batch loop's "
                    f"`{step.recv}.step()`: the first value of the schedule is skipped and every later pass uses "
                    f"the next one (PyTorch warns: call optimizer.step() before lr_scheduler.step())"), None)

    def _before_training_helper(self, ctx, seen: set[int]):
        """`for epoch in ...: scheduler.step(); train(model, loader, optimizer)`, where `train` is a function of
        the file whose training loop steps the optimizer it is given (or the module-level one it reads): the epoch loop of the caller steps the
        schedule before the first epoch's optimizer steps."""
        index = ctx.index
        for it in iterations(index):
            step = it.step_event()
            fn = it.scope
            if it.backward is None or step is None or not isinstance(fn, cst.FunctionDef) or \
                    index.functions.get(fn.name.value) is not fn or it.epoch_loop is not None:
                continue
            params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
            given = step.recv in params
            if not given and (not step.recv or "." in step.recv or any(b.name == step.recv for b in it.flow.bindings)):
                continue  # neither the optimizer it is given nor a module-level one it reads
            for flow, st, call, bound in index.callgraph.sites(fn) or ():
                if given:
                    arg = argument_for(fn, call, step.recv, bound)
                    opt = dotted(arg) if arg is not None else None
                else:
                    # `def train(): ... optimizer.step()` reading the module's optimizer: the caller must see the
                    # same name (the module itself, or a function that binds no local of that name)
                    opt = step.recv
                    if not isinstance(flow.scope, cst.Module) and any(b.name == opt for b in flow.bindings):
                        continue
                loop = self._enclosing_loop(index, call)
                if not given and loop is not None and self._called_before(index, flow, loop, fn.name.value):
                    continue  # a warm-up call before the epoch loop steps the optimizer first
                branch = None
                if loop is None and opt is not None:
                    loop, branch = self._branch_of_loop(index, call)
                    if loop is not None and not self._only_trained_in(index, flow, loop, branch, opt):
                        continue
                if opt is None or loop is None:
                    continue
                sched = self._stepped_before(index, flow, branch or loop, call, opt, fn.name.value)
                if sched is None or id(sched) in seen:
                    continue
                seen.add(id(sched))
                recv = index.code(sched.func.value)
                where = "at the start of each pass of this loop" if branch is None else (
                    f"in the only branch of this loop that trains `{opt}`")
                yield ctx.finding(sched, (
                    f"`{recv}.step()` runs {where}, before `{fn.name.value}(...)` steps "
                    f"`{opt}`: the first value of the schedule is skipped and every later epoch uses the next one "
                    f"(PyTorch warns: call optimizer.step() before lr_scheduler.step())"), None)

    def _before_batch_helper(self, ctx, seen: set[int]):
        """`for epoch in ...: sched.step(); for batch in loader: train_sample(batch)`, where `train_sample` is a
        function of the file with no loop of its own that unconditionally steps the optimizer (a module-level
        one it reads, or the one it is given): the epoch loop steps the schedule before the batch loop's first
        update. Reported without a fix (where the epoch ends is the caller's business)."""
        index = ctx.index
        for it in iterations(index):
            step = it.step_event()
            fn = it.scope
            if it.backward is None or step is None or step.path or step.nested or it.loop is not None or \
                    not isinstance(fn, cst.FunctionDef) or index.functions.get(fn.name.value) is not fn or \
                    not step.recv:
                continue
            params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
            given = step.recv in params
            if not given and ("." in step.recv or any(b.name == step.recv for b in it.flow.bindings)):
                continue  # an attribute or a local optimizer: not shown to be the caller's
            for flow, st, call, bound in index.callgraph.sites(fn) or ():
                arg = argument_for(fn, call, step.recv, bound) if given else None
                opt = (dotted(arg) if arg is not None else None) if given else step.recv
                if opt is None or (not given and any(b.name == opt for b in flow.bindings)):
                    continue  # the caller's name is a local of its own, not the module's optimizer
                batch = self._enclosing_loop(index, call)
                epoch = index.parents.get(index.parents.get(batch)) if batch is not None else None
                if not isinstance(epoch, (cst.For, cst.While)) or not any(s is batch for s in _body(epoch)):
                    continue
                if not self._only_trained_in(index, flow, epoch, batch, opt) or \
                        self._called_before(index, flow, epoch, fn.name.value):
                    continue
                sched = self._stepped_before(index, flow, epoch, call, opt, fn.name.value, line=batch)
                if sched is None or id(sched) in seen:
                    continue
                seen.add(id(sched))
                yield ctx.finding(sched, (
                    f"`{index.code(sched.func.value)}.step()` runs at the start of each epoch, before the batch "
                    f"loop's `{fn.name.value}(...)` steps `{opt}`: the first value of the schedule is skipped and "
                    f"every later epoch uses the next one (PyTorch warns: call optimizer.step() before "
                    f"lr_scheduler.step())"), None)

    @staticmethod
    def _called_before(index, flow, loop, helper: str) -> bool:
        """A statement before `loop` in its scope calls `helper` (a warm-up pass steps the optimizer first),
        or `loop` is not a statement of its scope's body (what runs before it is not read)."""
        scope = flow.scope
        stmts = _body(scope) if isinstance(scope, (cst.FunctionDef, cst.Module)) else []
        k = next((i for i, s in enumerate(stmts) if s is loop), None)
        return k is None or any(
            isinstance(n, cst.Call) and dotted(n.func) == helper
            for s in stmts[:k] if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) for n in walk(s))

    @staticmethod
    def _enclosing_loop(index, call):
        """The loop whose body holds the statement line of `call` directly."""
        line = index.enclosing(call, (cst.SimpleStatementLine,))
        loop = index.parents.get(index.parents.get(line)) if line is not None else None
        if isinstance(loop, (cst.For, cst.While)) and any(s is line for s in _body(loop)):
            return loop
        return None

    @staticmethod
    def _branch_of_loop(index, call):
        """(loop, branch) when the statement line of `call` sits directly in a branch (`if`, `elif` or `else`
        body) of an `if` that is a statement of the loop's body: `else: sched.step(); train(...)`."""
        line = index.enclosing(call, (cst.SimpleStatementLine,))
        block = index.parents.get(line) if line is not None else None
        owner = index.parents.get(block) if isinstance(block, cst.IndentedBlock) else None
        if not isinstance(owner, (cst.If, cst.Else)) or not any(s is line for s in block.body):
            return None, None
        top = owner
        while True:  # up the `elif` chain to the `if` statement itself
            up = index.parents.get(top)
            if isinstance(up, cst.If) and (up.orelse is top):
                top = up
            elif isinstance(top, cst.Else) and isinstance(up, cst.If):
                top = up
            else:
                break
        loop = index.parents.get(index.parents.get(top))
        if isinstance(top, cst.If) and isinstance(loop, (cst.For, cst.While)) and any(s is top for s in _body(loop)):
            return loop, owner
        return None, None

    @staticmethod
    def _only_trained_in(index, flow, loop, branch, opt: str) -> bool:
        """`opt` is named nowhere in the loop but in `branch`, and nothing before the loop in its scope names it
        but the `torch.optim` constructors that build it and its schedulers: whatever pass first takes the
        branch, the optimizer has not stepped before it (so no test on the epoch makes that step a late one)."""
        word = re.compile(rf"(?<![\w.]){re.escape(opt)}(?![\w])")
        inside = {id(n) for n in walk(branch)}
        for node in walk(loop):
            if id(node) not in inside and isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == opt:
                return False
        scope = flow.scope
        stmts = _body(scope) if isinstance(scope, (cst.FunctionDef, cst.Module)) else []
        if not any(s is loop for s in stmts):
            return False  # the loop sits in a block of its own: what runs before it is not read here
        for stmt in stmts[: [i for i, s in enumerate(stmts) if s is loop][0]]:
            if not word.search(index.code(stmt)):
                continue
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                    and (qualname(small.value.func, index.imports) or "").startswith("torch.optim.")):
                return False
        return True

    @staticmethod
    def _stepped_before(index, flow, loop, call, opt: str, helper: str, line=None):
        """The `sched.step()` call that a top-level line of `loop`'s body (or of the branch `loop`) makes before
        the line calling the helper (or `line`, a statement of the body holding the call), where `sched` is bound only to a torch scheduler (not ReduceLROnPlateau) built on `opt`; no
        optimizer step, no other call of the helper and no line that leaves the pass may come between."""
        body = _body(loop)
        line = line or index.enclosing(call, (cst.SimpleStatementLine,))
        k = next(i for i, s in enumerate(body) if s is line)
        found = None
        for stmt in body[:k]:
            text = index.code(stmt)
            if found is not None and (f"{opt}.step" in text or f"{helper}(" in text or "continue" in text
                                      or "break" in text or "return" in text):
                return None
            if found is None and f"{helper}(" in text:
                return None  # the helper trains first: the schedule steps after an epoch
            if found is not None or not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
                continue
            small = stmt.body[0]
            c = small.value if isinstance(small, cst.Expr) else None
            if not (isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) and c.func.attr.value == "step"
                    and not c.args):
                continue
            name = dotted(c.func.value)
            bs = [b for b in flow.visible_bindings(name)] if name else []
            if bs and all(b.kind is Kind.SCHEDULER and isinstance(b.value, cst.Call) and b.value.args
                          and dotted(b.value.args[0].value) == opt and "Plateau" not in (b.ctor or "")
                          for b in bs):
                found = c
        return found

    def _swap_fix(self, ctx, it, e, step):
        index = ctx.index
        if e.path != step.path or not single(e.line) or not single(step.line) or not same_block(index, e.line, step.line):
            return None
        if not isinstance(e.small, cst.Expr) or e.small.value is not e.node:
            return None
        lines = block_lines(index, e.line)
        i, j = lines.index(e.line), lines.index(step.line)
        anchor = step.line
        nxt = lines[j + 1] if j + 1 < len(lines) else None
        if nxt is not None and any(x.op == "update" and x.line is nxt for x in it.events):
            anchor = nxt
        for line in lines[i + 1:j]:
            if mentions(line, ("lr", "param_groups", e.recv)):
                return None
        edits = compose([Op(e.line, remove=True), Op(anchor, after=[moved(e.line)])])
        return ctx.fix(f"step `{e.recv}` after `{step.recv}.step()`", edits, Safety.UNSAFE, train_loop_contract(it))

    def _epoch_fix(self, ctx, it, e):
        if e.path or not single(e.line) or not isinstance(e.small, cst.Expr) or e.small.value is not e.node or \
                e.line not in _body(it.epoch_loop):
            return None
        anchor, _why = epoch_end_anchor(it)
        if anchor is None:
            return None
        edits = compose([Op(e.line, remove=True), Op(anchor, after=[moved(e.line)])])
        return ctx.fix(f"step `{e.recv}` at the end of the epoch, after the optimizer steps", edits, Safety.UNSAFE,
                       train_loop_contract(it))


def _function_start_events(it) -> list:
    """The events of the function's body before its batch loop, when nothing there steps, or may step, an
    optimizer: a helper of the file that does, or an unknown call handed the optimizer or the model."""
    events: list = []
    it._block(_body(it.scope), (), (), events, skip=it.loop)
    out = []
    for e in it._resolve_calls(events):
        if e.op == "inner":
            return out
        if e.op in ("step", "opaque") or (e.op == "helper" and "step" in e.info.get("ops", ())):
            return []
        out.append(e)
    return []


def _called(index, fn) -> bool:
    """Some call of the project reaches `fn`: a function nobody calls says nothing of how it is called."""
    if index.callgraph.sites(fn):
        return True
    name = fn.name.value
    cls = index.enclosing_class(fn)
    if index.functions.get(name) is not fn:
        if cls is None or index.method(cls, name) is not fn:
            return False
        name = f"{cls.name.value}.{name}"
    return index.project is not None and index.project.callers_grad(name, lambda _caller: False) is not None


def _runs_in_first_pass(e, loop) -> bool:
    """The step's branch does not test the loop's own variables (`if rnd > 0:` skips the first pass), other
    than as `i == 0` / `i % k == 0`, which hold on a first pass counted from 0."""
    targets = {n.value for n in walk(loop.target) if isinstance(n, cst.Name)} if isinstance(loop, cst.For) else set()
    for node, branch in e.path:
        if not isinstance(node, cst.If):
            return False
        read = {n.value for n in walk(node.test) if isinstance(n, cst.Name)} & targets
        if not read:
            continue
        test = node.test
        ok = branch == 0 and isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.Equal) and \
            isinstance(test.comparisons[0].comparator, cst.Integer) and test.comparisons[0].comparator.value == "0"
        left = test.left if ok else None
        if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo):
            left = left.left
        if not (ok and isinstance(left, cst.Name) and left.value in targets):
            return False
    return True


def _guarded_only_by(e, recv: str) -> bool:
    """Unconditional, or under tests that read nothing but the scheduler (`if scheduler is not None:`): a
    test of the function's arguments (`if ep > 0:`) may be the idiom that skips the first epoch."""
    for node, branch in e.path:
        if not isinstance(node, cst.If) or branch != 0:
            return False
        names = {dotted(n) for n in walk(node.test) if isinstance(n, (cst.Name, cst.Attribute))}
        names.discard(None)
        if not names or any(n != recv and not recv.startswith(n + ".") and n not in ("None",) for n in names):
            return False
    return True


def _may_run_in_first_epoch(e) -> bool:
    """An epoch-start scheduler step that may run before the first epoch's optimizer steps: unconditional, or
    in a branch (`else:` of `if isinstance(sched, ReduceLROnPlateau)`, `if args.flag:`) whose conditions do not
    read the epoch. A condition on the epoch (`if epoch > 0:`, `else:` of `if epoch == start_epoch:`, warm-up
    boundaries) may be the idiom that skips the first epoch, which equals stepping at the end of the previous
    one; a branch that leaves the iteration (`continue`: fast-forwarding a resumed schedule) runs no batch."""
    if not e.path:
        return True
    if e.info.get("exits"):
        return False
    for node, branch in e.path:
        if not isinstance(node, cst.If):
            return False
        test_owner, i = node, 0
        while isinstance(test_owner, cst.If) and i <= branch:
            # this branch runs only when the tests before it failed and its own held: all of them decide it
            if "epoch" in cst.Module([]).code_for_node(test_owner.test).lower():
                return False
            test_owner, i = test_owner.orelse, i + 1
            if isinstance(test_owner, cst.Else):
                break
    return True


def _built_outside_torch(it, recv: str) -> bool:
    """`train_step()` nested in `main()` steps `scheduler`, a free name `main` binds from `init_opt(...)`, a
    project factory (ijepa's warm-up cosine schedule is a plain object whose `step()` sets the lr of the coming
    update): only a torch scheduler has the documented order, so a binding in an enclosing function that
    is not a torch scheduler's construction means silence."""
    if it.bindings(recv):
        return False
    index, node = it.index, it.scope
    while node is not None:
        node = index.parents.get(node)
        if isinstance(node, cst.FunctionDef):
            outer = [b for b in index.flow(node).bindings if b.name == recv]
            if outer:
                return not all(is_torch_scheduler(index, b.ctor) for b in outer)
    return False


def _returns_before(index, line, later) -> bool:
    """The block holding `line` ends in `return`/`raise` after it, and `later` is not among the statements
    in between: `if 'A' in name: ...; sched.step(); return loss` followed by a separate `if 'B' in name:`
    block with its own `optimizer.step()`; on the path through the first block the second never runs."""
    block = index.parents.get(line)
    stmts = list(getattr(block, "body", ()) or ())
    if not any(st is line for st in stmts):
        return False
    rest = stmts[[i for i, st in enumerate(stmts) if st is line][0] + 1:]
    for st in rest:
        if any(node is later for node in walk(st)):
            return False
        if isinstance(st, cst.SimpleStatementLine) and any(isinstance(s, (cst.Return, cst.Raise)) for s in st.body):
            return True
    return False


def _steps_torch_schedule_of(it, e, step) -> bool:
    """The scheduler `e` steps is a torch scheduler (not ReduceLROnPlateau) built on the optimizer `step` steps."""
    info = scheduler_info(it, e.recv)
    return info.kind != "plateau" and is_torch_scheduler(it.index, info.ctor) and info.optimizer == step.recv


def _passed_schedule_of(it, e, step) -> bool:
    """The scheduler and the optimizer are both parameters of the function, and every call in the file
    passes a torch scheduler built on the optimizer it passes (analysis/schedules.py)."""
    params = {b.name for b in it.flow.bindings if b.is_param}
    if e.recv not in params or step.recv not in params or \
            any(not b.is_param for b in it.bindings(e.recv) + it.bindings(step.recv)):
        return False
    return passed_torch_scheduler(it.index, it.scope, e.recv, step.recv)


RULE = SchedulerBeforeOptimizer
