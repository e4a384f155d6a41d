"""GF211 eval-mode-left-on: `model.eval()` for validation in the epoch loop, never undone before training resumes."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.flow import Kind
from gradfix.analysis.gradpath import GradPaths, optimized_parts
from gradfix.analysis.expressions import code_of
from gradfix.analysis.iteration import _body, iterations
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.params import last_name
from gradfix.analysis.tree import calls_in, contains, walk
from gradfix.rule import Rule, RuleDocs

# Calls that may be handed the model without changing its mode.
_HARMLESS = frozenset({"print", "len", "str", "repr", "isinstance", "hasattr", "getattr", "id", "type", "vars",
                       "copy.deepcopy", "torch.save", "wandb.watch", "logging.info", "logger.info", "log.info"})
_MAX_DEPTH = 3

TRAIN, EVAL = "train", "eval"


class _Unknown(Exception):
    """The model's mode cannot be followed (it is handed to code gradfix cannot see)."""


class _Modes:
    """Follows one model's train/eval mode through statements. A state is a frozenset of
    (mode, node that set eval mode or None)."""

    def __init__(self, index, model: str, depth: int = 0, part: str | None = None):
        self.index, self.model, self.depth = index, model, depth
        self.part = part   # the submodule (`model.heads[-1]`) that alone holds what the optimizer steps
        self.jumps: list[set] = []          # per enclosing loop being followed: states that break or continue
        self.next_iteration: set = set()    # states that `continue` the outermost (epoch) loop
        self.returns: set = set()           # states at a `return` (a helper's result; the end of the run at depth 0)

    def block(self, stmts, state: frozenset) -> frozenset:
        for stmt in stmts:
            state = self.statement(stmt, state)
        return state

    def statement(self, stmt, state: frozenset) -> frozenset:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                for call in calls_in(small):
                    state = self.call(call, state)
                if isinstance(small, (cst.Break, cst.Continue)):
                    if self.jumps:
                        self.jumps[-1].update(state)   # leaves the inner loop, or starts its next pass
                    elif isinstance(small, cst.Continue):
                        self.next_iteration.update(state)
                    return frozenset()                 # a `break` of the epoch loop: no later epoch trains
                if isinstance(small, cst.Return):
                    self.returns.update(state)
                    return frozenset()
                if isinstance(small, cst.Raise):
                    return frozenset()
            return state
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return state
        if isinstance(stmt, cst.If):
            out = self.block(_body(stmt), self.call_all(stmt.test, state))
            orelse = stmt.orelse
            if orelse is None:
                return out | self.call_all(stmt.test, state)
            rest = self.statement(orelse, self.call_all(stmt.test, state)) if isinstance(orelse, cst.If) \
                else self.block(_body(orelse), self.call_all(stmt.test, state))
            return out | rest
        if isinstance(stmt, (cst.For, cst.While)):
            head = self.call_all(stmt.iter if isinstance(stmt, cst.For) else stmt.test, state)
            self.jumps.append(set())
            try:
                once = self.block(_body(stmt), head)
                twice = self.block(_body(stmt), once | frozenset(self.jumps[-1]))
                jumped = frozenset(self.jumps[-1])
            finally:
                self.jumps.pop()
            after = head | once | twice | jumped
            if stmt.orelse is not None:
                after = self.block(_body(stmt.orelse), after)
            return after
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                state = self.call_all(item.item, state)
            return self.block(_body(stmt), state)
        if isinstance(stmt, cst.Try):
            out = self.block(_body(stmt), state)
            for handler in stmt.handlers:
                out = out | self.block(_body(handler), state)
            if stmt.orelse is not None:
                out = self.block(_body(stmt.orelse), out)
            if stmt.finalbody is not None:
                out = self.block(_body(stmt.finalbody), out)
            return out
        raise _Unknown()  # match statements and the like: not followed

    def call_all(self, expr, state: frozenset) -> frozenset:
        for call in calls_in(expr):
            state = self.call(call, state)
        return state

    def call(self, call: cst.Call, state: frozenset) -> frozenset:
        func = call.func
        if isinstance(func, cst.Attribute) and self._sets_mode_of(_module_itself(func.value)):
            meth = func.attr.value
            if meth == "eval" and not call.args:
                return frozenset({(EVAL, call)})
            if meth == "train":
                if not call.args:
                    return frozenset({(TRAIN, None)})
                value = call.args[0].value
                if isinstance(value, cst.Name) and value.value in ("True", "False"):
                    return frozenset({(TRAIN, None)}) if value.value == "True" else frozenset({(EVAL, call)})
                raise _Unknown()
            return state
        handed = [a for a in call.args if dotted(a.value) == self.model]
        if not handed:
            fn = self._own_method(call)
            if fn is None:
                return state
            param = self.model  # `self.evaluate(...)` runs on the same `self`: `self.model` is the same module
        else:
            name = dotted(func)
            q = qualname(func, self.index.imports) if name else None
            if name in _HARMLESS or q in _HARMLESS:
                return state
            fn = self.index.functions.get(name) if isinstance(func, cst.Name) else None
            if fn is None or self.depth >= _MAX_DEPTH:
                raise _Unknown()
            param = _parameter_for(fn, call, handed[0])
            if param is None:
                raise _Unknown()
        inner = _Modes(self.index, param, self.depth + 1)
        out = set()
        restores = _restores(fn, param)
        for mode, node in state:
            inner.returns = set()
            ends = inner.block(_body(fn), frozenset({(mode, node)})) | frozenset(inner.returns)
            if restores and {m for m, _ in ends} == {TRAIN, EVAL}:
                # the helper restores train mode on some paths only (`if was_training: net.train()` in a
                # context manager, `if not final: model.train()`): it manages the mode on purpose
                raise _Unknown()
            for m, n in ends:
                # an eval set inside the helper is reported at the call that runs it
                out.add((m, call if m == EVAL and n is not node else n))
        return frozenset(out)


    def _own_method(self, call: cst.Call) -> cst.FunctionDef | None:
        """The method of the enclosing class that `self.evaluate(...)` runs, when the model followed is an
        attribute of `self` (`self.model`) and the method reads it: what it does to `self.model`'s mode happens
        to the model of the loop. None for any other call (it is not handed the model)."""
        func = call.func
        if not (self.model.startswith("self.") and isinstance(func, cst.Attribute) and
                isinstance(func.value, cst.Name) and func.value.value == "self") or self.depth >= _MAX_DEPTH:
            return None
        cls = self.index.enclosing(call, (cst.ClassDef,))
        fn = self.index.method(cls, func.attr.value) if cls is not None else None
        if fn is None or not fn.params.params or fn.params.params[0].name.value != "self" or fn.decorators:
            return None
        attr = self.model.split(".")[1]
        if not any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == "self" and
                   n.attr.value == attr for n in walk(fn.body)):
            return None
        return fn

    def _sets_mode_of(self, target) -> bool:
        """`model.train()`, or `model.heads[-1].train()` when that head is all the optimizer trains: the mode
        of the part being trained is the one that matters (the rest is a fixed feature extractor)."""
        return dotted(target) == self.model or self.part is not None and code_of(target) == self.part


def _trained_part(it, model: str) -> str | None:
    """The one submodule of `model` (`model.heads[-1]`, `model.fc`) whose parameters are all the step's
    optimizer holds (analysis/gradpath.py `optimized_parts`), else None."""
    parts = optimized_parts(it.tl)
    if not parts or len(parts) != 1:
        return None
    part = next(iter(parts))
    return part if part.startswith((model + ".", model + "[")) else None


def _state_before(modes: _Modes, stmts, target: cst.CSTNode, state: frozenset) -> frozenset:
    """The mode right before `target` (a statement of `stmts` or nested in one): an `if`/`with` on the way
    is entered, so `if training: model.train(); out = model(x) ... else: model.eval()` sets train mode
    before that branch's forward. Another compound statement on the way counts from its start."""
    for stmt in stmts:
        if stmt is target:
            return state
        if contains(stmt, target):
            if isinstance(stmt, cst.If):
                state = modes.call_all(stmt.test, state)
                if contains(stmt.body, target):
                    return _state_before(modes, _body(stmt), target, state)
                orelse = stmt.orelse
                if isinstance(orelse, cst.If):
                    return _state_before(modes, [orelse], target, state)
                if orelse is not None and contains(orelse, target):
                    return _state_before(modes, _body(orelse), target, state)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    state = modes.call_all(item.item, state)
                return _state_before(modes, _body(stmt), target, state)
            return state
        state = modes.statement(stmt, state)
    return state


def _loop_of(index, node: cst.CSTNode):
    """The innermost loop around `node` (None outside one, or across a function)."""
    cur = index.parents.get(node)
    while cur is not None and not isinstance(cur, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)):
        cur = index.parents.get(cur)
    return cur if isinstance(cur, (cst.For, cst.While)) else None


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """Whether `stmt` (at any depth) assigns `name` (`layer = ...`, `self.model = ...`)."""
    for node in walk(stmt):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        if any(dotted(t) == name for t in targets):
            return True
    return False


def _may_change_mode(index, stmts: list) -> bool:
    """Cheap first look: a `.eval()` / `.train(...)` call, a call of a function of this file, or of a method of
    `self` (`self.validate()`)."""
    for stmt in stmts:
        for call in calls_in(stmt):
            func = call.func
            if isinstance(func, cst.Attribute) and (func.attr.value in ("eval", "train") or (
                    isinstance(func.value, cst.Name) and func.value.value == "self")):
                return True
            if isinstance(func, cst.Name) and func.value in index.functions:
                return True
    return False


# Module methods that return the module itself: `net.to(device).train()` sets the mode of `net`.
_RETURN_SELF = frozenset({"to", "cpu", "cuda", "float", "half", "double", "bfloat16", "train", "eval",
                          "requires_grad_", "apply", "type"})


def _module_itself(expr):
    """`net` for `net.to(device)`, `net.cpu()`, `net.eval()`, chained: what a mode call on it sets."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
            expr.func.attr.value in _RETURN_SELF:
        expr = expr.func.value
    return expr


def _restores(fn: cst.FunctionDef, param: str) -> bool:
    """Whether `fn` calls `param.train(...)` anywhere (also chained, `param.to(dev).train()`)."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "train"
               and dotted(_module_itself(c.func.value)) == param for c in calls_in(fn))


def _parameter_for(fn: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if arg.keyword is not None:
        names = params + [p.name.value for p in fn.params.kwonly_params]
        return arg.keyword.value if arg.keyword.value in names else None
    if arg.star:
        return None
    position = [a for a in call.args if a.keyword is None].index(arg)
    return params[position] if position < len(params) else None


class EvalModeLeftOn(Rule):
    id = "GF211"
    name = "eval-mode-left-on"
    summary = "The model is put in eval mode inside the epoch loop and still in it when the next epoch trains"
    docs = RuleDocs(
        what=(
            "In a training loop nested in an epoch loop, finds `model.eval()` (or `model.train(False)`, or a call of "
            "a function of this file that leaves the model it is given in eval mode, such as an `evaluate(model, "
            "loader)` helper, or a method of the class called on `self`, `self.validate()`, when the model is an attribute "
            "of `self` the method uses) that runs in the epoch loop's body while no `model.train()` runs between it and the "
            "next epoch's batch loop. Also inside the batch loop (validation every N steps, with or without an "
            "epoch loop): such an eval on some pass with no `model.train()` before the next batch's forward, so the "
            "batches after it train in eval mode; not when the first batch already runs in eval mode (on purpose) "
            "or the body breaks out of the loop or returns, or every forward that can feed the backward has a train call before it in its own branch (`if training: model.train(); ...step... else: model.eval(); no-grad forward`: a pass helper whose flag is fixed for the call, so no step runs in eval mode), or the module is built again at the top of every pass (a fresh module each time: `layer = nn.BatchNorm1d(n)` in a check that compares layers). `model` is a module the training loop calls and its optimizer steps. Left alone: "
            "a `model.train()` "
            "at the start of each epoch or after the validation (chained calls count: `model.to(device).train()` "
            "sets `model`'s mode, as `.to()`, `.cpu()` and `.cuda()` return the module itself); a `train()` of the one "
            "submodule whose parameters are all the step's optimizer holds (a warm-up of a new head, `opt = "
            "SGD(model.heads[-1].parameters())` with `model.heads[-1].train()` at each epoch start: the part being "
            "trained is in train mode, the rest is a fixed feature extractor; a `train()` of another part, or an "
            "optimizer over the whole model, is still reported); a helper that restores train mode; `eval()` after "
            "the epoch loop (final testing); other modules (a teacher, an EMA copy); a model of this file with no "
            "dropout or batch norm (the modes compute the same: decided from its code's names and calls, never "
            "from text, so a comment or docstring naming `Dropout` or a commented-out `Variable(` is no evidence, "
            "and a torch function such as `Variable` is not taken for a library module); and a model handed to a "
            "function gradfix cannot "
            "see, which may restore the mode; and an epoch loop that sets the mode itself before its batch loop (a "
            "`for phase in ('train', 'val')` loop with `model.train()` / `model.eval()` by phase, or `eval()` on "
            "purpose to freeze batch norm)."
        ),
        why=(
            "`eval()` switches dropout off and makes batch norm normalise with its running statistics instead of "
            "the batch's, without updating them. Left on, every epoch after the first trains a different network "
            "than intended: no dropout regularisation, and batch norm statistics frozen at their values after the "
            "first epoch. Training goes on without an error; it generalises worse or drifts (hazards.md "
            "eval-mode-left-on; the ML code smell \"Training/Evaluation Mode Improper Toggling\")."
        ),
        example=(
            "for epoch in range(epochs):\n    for x, y in train_loader:\n        ...\n    model.eval()\n"
            "    with torch.no_grad():\n        val_loss = sum(loss_fn(model(x), y) for x, y in val_loader)"
        ),
        fixed_example=(
            "for epoch in range(epochs):\n    model.train()\n    for x, y in train_loader:\n        ...\n"
            "    model.eval()\n    with torch.no_grad():\n        val_loss = sum(loss_fn(model(x), y) for x, y in val_loader)"
        ),
        fix="Detect only: call `model.train()` at the start of each epoch (before the batch loop).",
        fix_safety="No fix is offered.",
        verification="None (detect only).",
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        index = ctx.index
        seen: set[int] = set()
        for it in iterations(index):
            if it.loop is None or id(it.loop) in seen:
                continue
            seen.add(id(it.loop))
            if it.epoch_loop is None or not any(s is it.loop for s in _body(it.epoch_loop)):
                yield from self._within_batch_loop(ctx, it)
                continue
            stmts = _body(it.epoch_loop)
            if not any(s is it.loop for s in stmts):
                continue  # the batch loop sits under a condition or a `with`: not followed
            k = next(i for i, s in enumerate(stmts) if s is it.loop)
            if not _may_change_mode(index, stmts[:k] + stmts[k + 1:]):
                continue
            trained = GradPaths(it.tl).trained  # the modules the optimizer steps (not a teacher or EMA copy)
            for model in sorted({e.recv for e in it.events if e.op == "forward" and e.recv} & trained):
                finding = self._inspect(ctx, it, model, stmts[:k], stmts[k + 1:])
                if finding is not None:
                    yield finding

    def _within_batch_loop(self, ctx, it):
        """The batch loop on its own (no epoch loop around it, or one that does not hold it directly)."""
        if not _may_change_mode(ctx.index, [it.loop]):
            return
        trained = GradPaths(it.tl).trained
        for model in sorted({e.recv for e in it.events if e.op == "forward" and e.recv} & trained):
            finding = self._inside_loop(ctx, it, model)
            if finding is not None:
                yield finding

    def _inside_loop(self, ctx, it, model: str):
        """`model.eval()` (or a helper leaving it in eval mode) inside the batch loop, every few steps, with no
        `model.train()` before the next batch's forward: the rest of the pass trains in eval mode. Not when the
        first batch already runs in eval mode (set on purpose), nor when the body breaks out of the loop."""
        index = ctx.index
        body = _body(it.loop)
        forward = next((e for e in it.events if e.op == "forward" and e.recv == model), None)
        if forward is None:
            return None
        k = next((i for i, s in enumerate(body) if s is forward.line or contains(s, forward.line)), None)
        if k is None or any(isinstance(n, cst.Break) and _loop_of(index, n) is it.loop for n in walk(it.loop)):
            return None
        if any(_binds(stmt, model) for stmt in body[:k]):
            return None   # a fresh module every pass (`layer = nn.BatchNorm1d(n)` at the top): no mode carries over
        modes = _Modes(index, model, part=_trained_part(it, model))
        trained = frozenset({(TRAIN, None)})
        # the forwards that can feed this backward (not a no-grad forward in a sibling `else:` branch)
        sites = [e.line for e in it.events if e.op == "forward" and e.recv == model and it.backward is not None
                 and e.order <= it.backward.order and e.compatible(it.backward)] or [forward.line]
        modes.jumps.append(set())   # a `continue` of the batch loop starts its next pass
        try:
            at_first = frozenset().union(*(_state_before(modes, body, s, trained) for s in sites))
            end = modes.block(body, trained) | frozenset(modes.jumps[-1])
            at_next = frozenset().union(*(_state_before(modes, body, s, end) for s in sites))
        except _Unknown:
            return None
        if any(m == EVAL for m, _ in at_first) or modes.returns:
            return None   # eval on purpose before the first batch's forward, or a body that returns
        culprits = [n for m, n in at_next if m == EVAL and n is not None and contains(it.loop, n)]
        if not culprits or not self._mode_dependent(ctx, it, model):
            return None
        culprit = min(culprits, key=lambda n: (index.position(n).start.line, index.position(n).start.column))
        message = (f"`{code_of(culprit)}` leaves `{model}` in eval mode inside the batch loop, and nothing calls "
                   f"`{model}.train()` before the next batch's forward: the batches after it train in eval mode, "
                   f"with dropout off and batch norm using, and never updating, its running statistics; call "
                   f"`{model}.train()` after it")
        return ctx.finding(culprit, message, None)

    def _inspect(self, ctx, it, model: str, before: list, after: list):
        modes = _Modes(ctx.index, model, part=_trained_part(it, model))
        trained = frozenset({(TRAIN, None)})
        try:
            if modes.statement(it.loop, trained) != trained or \
                    modes.statement(it.loop, frozenset({(EVAL, None)})) != frozenset({(EVAL, None)}):
                return self._inside_loop(ctx, it, model)  # the batch loop changes the mode itself
            first = modes.block(before, trained)
            modes.next_iteration = set()
            end = modes.block(after, first) | frozenset(modes.next_iteration)
            later = modes.block(before, end)
        except _Unknown:
            return None
        if not self._mode_dependent(ctx, it, model):
            return None
        if any(m == EVAL for m, _ in first):
            return None  # the epoch loop sets the mode itself before the batch loop (a train/val phase loop,
            #              or eval on purpose to freeze batch norm)
        culprits = [n for m, n in later if m == EVAL and n is not None]
        if not culprits:
            return None
        culprit = min(culprits, key=lambda n: (ctx.index.position(n).start.line, ctx.index.position(n).start.column))
        sometimes = " (on the epochs where that code runs)" if any(m == TRAIN for m, _ in later) else ""
        message = (f"`{code_of(culprit)}` leaves `{model}` in eval mode, and nothing calls `{model}.train()` before "
                   f"the batch loop: every epoch after the first trains in eval mode{sometimes}, with dropout off and "
                   f"batch norm using, and never updating, its running statistics; call `{model}.train()` at the "
                   f"start of each epoch")
        return ctx.finding(culprit, message, None)

    def _mode_dependent(self, ctx, it, model: str) -> bool:
        """False only when the model is known to compute the same in both modes."""
        index = ctx.index
        ctor = None
        value = None
        for flow in reversed(it.flow.and_module()):  # module level first: the function's own binding wins
            for b in flow.bindings:
                if b.name == model and b.kind is Kind.MODULE:
                    ctor, value = b.ctor, b.value
        if ctor is None:
            return True  # a parameter, an attribute, a library model: assume dropout or batch norm
        if ctor in index.module_classes:
            return _class_mode_dependent(index, ctor, set())
        if ctor.startswith("torch.nn.") and isinstance(value, cst.BaseExpression):
            return _tree_mode_dependent(index, value, set())
        return True


# Names that show a module behaves differently in train and eval mode (`nn.Dropout2d`,
# `nn.SyncBatchNorm`, `F.dropout`, `F.batch_norm`, `nn.RReLU`), read from the tree's names:
# a comment or a string that mentions them is no evidence.
_MODE_DEPENDENT_NAME = re.compile(r"Dropout|BatchNorm|RReLU")
_MODE_DEPENDENT_CALLS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                   "feature_alpha_dropout", "batch_norm", "rrelu"})


def _tree_mode_dependent(index, tree: cst.CSTNode, seen: set[str]) -> bool:
    """Whether the code under `tree` uses a mode-dependent layer or function, reads `.training`,
    builds a module class of this file that does, or calls a capitalised name imported from a
    library other than torch (a module that may hold either). Decided from the tree only.
    A candidate for the shared analysis (`does this code's behaviour depend on train/eval mode`)."""
    for node in walk(tree):  # comments and strings hold no names: they never count
        if isinstance(node, cst.Attribute):
            if node.attr.value == "training" or _MODE_DEPENDENT_NAME.search(node.attr.value):
                return True
        elif isinstance(node, cst.Name):
            if _MODE_DEPENDENT_NAME.search(node.value):
                return True
        if isinstance(node, cst.Call) and last_name(node.func) in _MODE_DEPENDENT_CALLS:
            return True  # `F.dropout(x, p)`, `self.dropout(h)`
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            used = node.func.value
            if not used[:1].isupper():
                continue
            if used in index.module_classes:
                if _class_mode_dependent(index, used, seen):
                    return True
                continue
            q = index.imports.resolve(used)
            if q != used and not (q == "torch" or q.startswith("torch.")):
                return True  # a module from another library or file: may hold dropout or batch norm
    return False


def _class_mode_dependent(index, name: str, seen: set[str]) -> bool:
    if name in seen:
        return False
    seen.add(name)
    cls = index.classes[name]
    for base in cls.bases:
        q = qualname(base.value, index.imports) or ""
        if q not in ("torch.nn.Module",) and q not in index.module_classes:
            return True  # a library base class may hold either
        if q in index.module_classes and _class_mode_dependent(index, q, seen):
            return True
    return _tree_mode_dependent(index, cls.body, seen)


RULE = EvalModeLeftOn
