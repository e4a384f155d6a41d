"""GF104 data-read-in-loss: a loss term computed from `.data` contributes no gradient."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.expressions import code_of
from gradfix.analysis.flow import Kind
from gradfix.analysis.forward_cuts import forward_cuts
from gradfix.analysis.gradpath import GradPaths
from gradfix.analysis.loops import _walk_calls, training_loops
from gradfix.analysis.names import chain_root, dotted
from gradfix.analysis.flags import passed_for
from gradfix.analysis.provenance import is_parameters_call
from gradfix.analysis.state_dict_terms import state_dict_call
from gradfix.analysis.tree import children, contains, walk
from gradfix.analysis.trainstep import loss_expressions, model_and_optimizer_setup, names_in
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_LEAVES_AUTOGRAD = {"item", "tolist", "numpy", "cpu_numpy"}


def data_reads(expr: cst.CSTNode, imports=None):
    """`X.data` attribute reads inside `expr` that would carry gradient without `.data`; with the file's
    `imports`, a module path (`torch.utils.data.DataLoader`: the submodule, not `Tensor.data`) is none."""
    out = []
    stack = [(expr, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, (cst.Lambda,)):
            continue
        if isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Name) and f.value in ("float", "int", "len"):
                continue
            if isinstance(f, cst.Attribute) and f.attr.value in _LEAVES_AUTOGRAD:
                continue  # `.item()` leaves autograd anyway; dropping `.data` would not help
            if imports is not None and _copies_to_new_leaf(f, imports):
                continue  # `torch.tensor(x.data)` copies into a new leaf: no graph with or without `.data`
        if isinstance(node, cst.Attribute) and node.attr.value == "data" and \
                not (imports is not None and imports.is_module(node.value)) and \
                not (imports is not None and isinstance(node.value, cst.Call) and _packs(node.value, imports)):
            out.append(node)  # not `pack_padded_sequence(out, n).data`: the packed field keeps the graph
        if isinstance(node, cst.Subscript):
            stack.append((node.value, node))  # an index (`q[range(n), actions.data]`) never carries gradient
            continue
        for child in children(node):
            if not _index_argument(node, child):
                stack.append((child, node))
    return out


_PACKERS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence",
                      "torch.nn.utils.rnn.PackedSequence"})
# numpy builds an array, `torch.tensor` a fresh leaf copy: either way the result carries no graph
_NEW_LEAF_CALLS = frozenset({"torch.tensor", "numpy.array", "numpy.asarray"})


def _packs(call: cst.Call, imports) -> bool:
    """`pack_padded_sequence(...)`, `nn.utils.rnn.pack_sequence(...)`, `PackedSequence(...)`: a PackedSequence,
    whose `.data` is the namedtuple field of packed values (graph and all), not `Tensor.data`."""
    name = dotted(call.func)
    if name is None:
        return False
    q = imports.resolve(name)
    return q in _PACKERS


def _copies_to_new_leaf(func, imports) -> bool:
    name = dotted(func)
    return name is not None and imports.resolve(name) in _NEW_LEAF_CALLS


def _packed_sequence(index, name: cst.Name) -> bool:
    """Whether every binding of `name` in its function (or, unbound there, at module level) is a plain
    assignment of a packing call (`packed = pack_padded_sequence(logits, lengths)`)."""
    scope = index.parents.get(name)
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = index.parents.get(scope)
    for where in ([scope, index.module] if isinstance(scope, cst.FunctionDef) else [index.module]):
        values = []
        for node in _scope_nodes(where):
            if isinstance(node, cst.Assign):
                for t in node.targets:
                    if any(isinstance(n, cst.Name) and n.value == name.value for n in walk(t.target)):
                        values.append(node.value if isinstance(t.target, cst.Name) else None)
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem,
                                   cst.NamedExpr, cst.Param)):
                target = getattr(node, "target", None) or getattr(node, "asname", None) or getattr(node, "name", None)
                if target is not None and any(isinstance(n, cst.Name) and n.value == name.value for n in walk(target)):
                    values.append(None)
        if values:
            return all(isinstance(v, cst.Call) and _packs(v, index.imports) for v in values)
    return False


def _scope_nodes(scope):
    """The nodes of `scope`, not those of functions, classes or lambdas nested in it."""
    stack = list(children(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(children(node))


_INDEX_TAKERS = {"gather": 1, "index_select": 1}


def _index_argument(node, child) -> bool:
    """`child` is the index argument of `x.gather(dim, index)` / `x.index_select(dim, index)`: integers,
    outside autograd whatever they are read through."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(child, cst.Arg)):
        return False
    pos = _INDEX_TAKERS.get(node.func.attr.value)
    if pos is None:
        return False
    if child.keyword is not None:
        return child.keyword.value == "index"
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return len(positional) > pos and positional[pos] is child


def _used_outside_data(exprs, name: str | None) -> bool:
    if name is None:
        return False
    for expr in exprs:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                if node.attr.value != "data":
                    stack.append(node.value)  # not `.attr`: `self.layer` does not read a name `layer`
                continue
            if isinstance(node, cst.Name) and node.value == name:
                return True
            stack.extend(children(node))
    return False


def _dead_parts(tl, paths=None) -> list:
    """The parts of the loss (additive terms and the values of the names they read) that carry no
    gradient once `.data` cuts; every part when the loss carries none at all. Empty when every term
    keeps a path."""
    paths = paths or GradPaths(tl, data_breaks=True)
    if not paths.carries(tl.loss):
        return [part for _stmt, value in paths.loss_values() for part in [value]] or [tl.loss]
    return [part for t in paths.additive_terms() if paths.dead_term(t) for part in paths.reaches(t)]


def _forward_data_cuts(tl):
    """(the `.data` read in a model class's forward, the call or `out["key"]` of the step that
    receives it, the paths) for each such value in a part of the loss that carries no gradient:
    `outputs = outputs.data; return outputs` in forward, `loss = crit(model(x), y)`."""
    index = tl.flow.index
    if not any(forward_cuts(index, c) for c in index.module_classes):
        return
    paths = GradPaths(tl, data_breaks=True)
    for part in _dead_parts(tl, paths):
        for node in walk(part):
            cut = paths.forward_cuts.get(id(node))
            if cut is not None and cut[1] == "data":
                yield cut, node, paths


def _holds_parameters(flow, name: cst.Name, paths) -> bool:
    """A name whose `.data` read cuts gradient the optimizer needs: a parameter (`nn.Parameter`, a
    `for p in model.parameters()` variable) or the output of a module the optimizer steps. A batch
    (`real_imgs.data`) or the output of a module another optimizer steps (the generator's samples in a
    WGAN-GP discriminator step) is data there."""
    comp = _comprehension_source(flow.index, name)
    if comp is not None:
        return comp
    for f in flow.and_module():
        bindings = [b for b in f.bindings if b.name == name.value]
        if not bindings:
            continue
        for b in bindings:
            if b.kind is Kind.PARAMETER:
                return True
            value = b.value
            for call in _walk_calls(value) if isinstance(value, cst.CSTNode) else ():
                if is_parameters_call(call):
                    return True
                if paths.trained_from.startswith("the modules") and paths.calls_trained(call):
                    return True
        return False
    return False


def _trained_call(paths, call: cst.Call, fn: cst.FunctionDef | None = None, site: cst.Call | None = None) -> bool:
    """`call` runs a module the step's optimizer is shown to train (not a target network). In a helper `fn`
    called as `site`, a module given as a parameter (`def reg(m): return m(z).data...`) is the argument the
    site passes for it."""
    if not paths.trained_from.startswith("the modules"):
        return False
    if paths.calls_trained(call):
        return True
    if fn is None or site is None or not isinstance(call.func, cst.Name):
        return False
    arg = passed_for(site, fn, call.func.value)
    return arg is not None and dotted(arg) in paths.trained


def _comprehension_source(index, name: cst.Name) -> bool | None:
    """For a comprehension's variable (`sum(p.data.abs().sum() for p in model.parameters())`):
    whether it iterates parameters; None when `name` is not bound by an enclosing comprehension."""
    cur = index.parents.get(name)
    while cur is not None and not isinstance(cur, cst.BaseSmallStatement):
        if isinstance(cur, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
            f = cur.for_in
            while f is not None:
                if isinstance(f.target, cst.Name) and f.target.value == name.value:
                    return is_parameters_call(f.iter)
                f = f.inner_for_in
        cur = index.parents.get(cur)
    return None


class DataReadInLoss(Rule):
    id = "GF104"
    name = "data-read-in-loss"
    summary = "A loss term computed through `.data` contributes no gradient"
    docs = RuleDocs(
        what=(
            "Finds `.data` read inside a term that is added to the loss before `backward()`: in the loss "
            "expression itself (`loss = ce + 1e-4 * w.data.pow(2).sum()`) or in the value a regulariser "
            "function returns (`return m.weight.data.abs().sum()`), including a penalty accumulated with `+=` in "
            "a loop over the parameters or summed by a generator over `model.parameters()`; and `.data` inside the "
            "forward of a model class of the file on the value it returns (`outputs = outputs.data; return "
            "outputs`), when the step's loss then carries no gradient (often hidden by re-wrapping it: "
            "`Variable(loss, requires_grad=True)`). Left alone there: a `.data` under a test of the mode "
            "(`if self.export:`, `if not self.training:`), and outputs the loss does not rely on alone. Left alone: a term "
            "that keeps a gradient path besides `.data` (semi-gradient TD targets, masks), `.data` of a batch or "
            "of samples from a module another optimizer steps, `.data` of the output of a module the step's optimizer "
            "is not shown to train, inline or in a helper whose return value the loss reads (`frozen(s2).data` "
            "in a TD-target helper: a stop-gradient on a target network; a module handed to the helper as an "
            "argument counts as the argument the call passes), values that leave autograd anyway (`.item()`), "
            "`.data` in an index position (`q[range(n), actions.data]`, the index of `gather` / `index_select`: an "
            "index never carries gradient), and a value re-wrapped at once as a new leaf (`mix = Variable(a.data + "
            "b.data, requires_grad=True)`, `mix.requires_grad_()`, a WGAN-GP interpolation): the returned term is a "
            "gradient with respect to that leaf, and how the leaf was made is data on purpose. Also left alone: a "
            "`.data` whose value weights another factor of a product that may carry gradient, the advantage or TD "
            "error of an actor-critic update (`delta = r + g * values[i + 1].data - values[i].data`, `gae = gae * g * "
            "lam + delta`, `policy_loss - log_probs[i] * gae`): a stop-gradient like `.detach()`, and dropping it "
            "would train the value head through the policy loss (a constant factor, `cfg.l1 * w.data.abs().sum()`, "
            "is still the hazard); and a module path (`torch.utils.data.DataLoader`: the submodule, not "
            "`Tensor.data`); the `.data` field of a PackedSequence (a name bound only to `pack_padded_sequence(...)`, "
            "`pack_sequence(...)` or `PackedSequence(...)` in its function, or such a call itself: the packed values, "
            "which keep the graph, and dropping `.data` would hand the criterion a PackedSequence); and `.data` "
            "inside `torch.tensor(...)`, `np.array(...)` or `np.asarray(...)` (a copy into a new leaf or an array: no "
            "graph with or without `.data`, as in a test that copies a numpy-backed course tensor's `.data` into torch). A rollout list filled by `values.append(value)` in the step carries what its items do. "
            "Also (detect only) a term `model.penalty(1e-2)` of the loss, `model` an instance of a module class of "
            "the file, whose method returns a value built only from `self.state_dict()` tensors (detached, like "
            "`.data`: `sum(w.pow(2).sum() for k, w in self.state_dict().items() if k.endswith('weight'))`, through "
            "the method's single assignments, times number arguments); left alone: `state_dict(keep_vars=True)`, "
            "`named_parameters()`, a value that also reads the module otherwise (`self.fc.weight`), an anchor "
            "copy subtracted from live weights, and a method with loops or branches."
        ),
        why=(
            "`.data` is a view outside autograd, so the term is a constant to backward: the regulariser silently "
            "does nothing (gradient norm 0.0 instead of 0.59, hazards.md), while the logged loss still includes it."
        ),
        example="def l1(m):\n    return m.weight.data.abs().sum()\n\nloss = crit(net(x), y) + 1e-4 * l1(net.fc)",
        fixed_example="def l1(m):\n    return m.weight.abs().sum()\n\nloss = crit(net(x), y) + 1e-4 * l1(net.fc)",
        fix="Drops `.data`, so autograd sees the term. Detect only for a `.data` in a model's forward: other callers "
            "may want the value outside autograd, and a re-wrapped loss must be unwrapped too.",
        fix_safety="Unsafe: the gradients change on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`gains-grad`: the term's value is unchanged, the original term gives no gradient to the parameters, "
            "and the rewritten term gives exactly autograd's gradient."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a `.data` read (`data_reads`, `forward_cuts`) in a training step, or a
        `state_dict()` call (`_state_dict_method_term`)."""
        return facts.backward_call and ("data" in facts.attrs or "state_dict" in facts.called_attrs)

    def check(self, ctx):
        index = ctx.index
        seen: set[int] = set()
        for _scope, flow, tl in training_loops(index):
            setup, model, _lr = model_and_optimizer_setup(tl)
            trained = None
            dead = None
            for stmt, value in loss_expressions(tl):
                for node in data_reads(value, index.imports):
                    if isinstance(node.value, cst.Name) and _packed_sequence(index, node.value):
                        continue  # a PackedSequence's `.data` field: it keeps the graph
                    if dead is None:
                        dead = _dead_parts(tl)
                    if not any(contains(part, node) for part in dead):
                        continue  # the term keeps gradient through another path (`target = r + g * q(s2).data`)
                    trained = GradPaths(tl) if trained is None else trained
                    if trained.weights_live_factor(node):
                        continue  # a GAE / advantage weight on the log-probabilities: a stop-gradient on purpose
                    base = node.value
                    if isinstance(base, (cst.Name, cst.Call)):
                        trained = GradPaths(tl) if trained is None else trained
                        if isinstance(base, cst.Name) and not _holds_parameters(flow, base, trained):
                            continue  # `real.data`, `fake.data` of a batch or an untrained output
                        if isinstance(base, cst.Call) and not _trained_call(trained, base):
                            continue  # `target_net(s2).data`: a stop-gradient on a module not trained here
                    if id(node) not in seen:
                        seen.add(id(node))
                        yield self._finding(ctx, node, None, setup, model, None, term=_term_of(value, node))
                for call in _walk_calls(value):
                    found = _state_dict_method_term(index, flow, call)
                    if found is not None and id(found[1]) not in seen:
                        seen.add(id(found[1]))
                        fn, returned, sd = found
                        yield ctx.finding(returned, (
                            f"`{ctx.code(call).strip()}` adds a term to the loss that `{fn.name.value}` builds only from "
                            f"`{ctx.code(sd).strip()}` tensors (line {ctx.span(sd).line}): state_dict() returns them "
                            f"detached, so the term contributes no gradient (the penalty is in the logged loss, "
                            f"nothing is regularised); read the parameters instead (`self.named_parameters()`, or "
                            f"`state_dict(keep_vars=True)`) (detect only)"))
                    if isinstance(call.func, cst.Name) and call.func.value in index.functions:
                        fn = index.functions[call.func.value]
                        for node in self._returned_data_reads(fn, index):
                            if isinstance(node.value, cst.Call):
                                trained = GradPaths(tl) if trained is None else trained
                                if not _trained_call(trained, node.value, fn, call):
                                    continue  # `target_net(s2).data` in a helper: a stop-gradient, as inline
                            if id(node) not in seen:
                                seen.add(id(node))
                                yield self._finding(ctx, node, fn, setup, model, ctx.code(call).strip())

            for cut, used, paths in _forward_data_cuts(tl):
                if id(cut[0]) not in seen:
                    seen.add(id(cut[0]))
                    yield ctx.finding(cut[0], self._forward_message(ctx, cut, used, paths))

    def _forward_message(self, ctx, cut, used, paths) -> str:
        """Detect only: the forward may return `.data` on purpose for another caller (an inference path
        under a flag), and the loop may rewrap the loss: what to change is for the user to say."""
        src = ", ".join(f"`{n}`" for n in sorted(paths.trained))
        return (f"`{ctx.code(cut[0]).strip()}` in `{cut[2]}.forward` returns a value outside autograd, and the "
                f"training step computes the loss from `{ctx.code(used).strip()}` (line {ctx.span(used).line}): the "
                f"loss carries no gradient to {src} (re-wrapping it as a tensor that requires grad only hides the "
                f"error); return the value without `.data`")

    def _returned_data_reads(self, fn: cst.FunctionDef, index):
        """`.data` reads in what `fn` returns, following local assignments that feed it."""
        if not isinstance(fn.body, cst.IndentedBlock):
            return []
        smalls = []
        stack = list(fn.body.body)
        while stack:
            node = stack.pop(0)
            if isinstance(node, cst.SimpleStatementLine):
                smalls.extend(node.body)
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                continue
            elif isinstance(node, (cst.With, cst.For, cst.While, cst.If, cst.Try)):
                inner = list(node.body.body)
                orelse = getattr(node, "orelse", None)
                if isinstance(orelse, cst.If):
                    inner.append(orelse)
                elif orelse is not None:
                    inner.extend(orelse.body.body)
                stack[0:0] = inner
        wanted: set[str] = set()
        exprs = []
        for small in reversed(smalls):
            if isinstance(small, cst.Return) and small.value is not None:
                exprs.append(small.value)
                wanted |= names_in(small.value)
            elif isinstance(small, cst.Expr) and _rewrapped_name(small.value) in wanted:
                # `mix.requires_grad_()`: from here back, `mix` is a fresh leaf; how it was made is data
                wanted.discard(_rewrapped_name(small.value))
            elif isinstance(small, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                if any(isinstance(t, cst.Name) and t.value in wanted for t in targets):
                    leaf = isinstance(small, cst.Assign) and _new_leaf(small.value)
                    if leaf:
                        # `mix = Variable(a.data + b.data, requires_grad=True)`: the returned value is a
                        # gradient with respect to a new leaf (a WGAN-GP mix); its `.data` inputs are data
                        wanted -= {t.value for t in targets if isinstance(t, cst.Name)}
                        continue
                    exprs.append(small.value)
                    wanted |= names_in(small.value)
        found = []
        for e in exprs:
            found.extend(data_reads(e, index.imports))
        # `mask = (w.data.abs() > t).float(); return (w * mask).pow(2).sum()`: the value still reads `w`
        # with autograd, so it keeps its gradient; only reads whose root is used through `.data` alone count
        return [n for n in found if not _used_outside_data(exprs, chain_root(n.value))
                and not (isinstance(n.value, cst.Name) and _packed_sequence(index, n.value))]

    def _finding(self, ctx, node: cst.Attribute, fn, setup, model, call_code, term=None):
        where = f" in the value `{fn.name.value}` returns" if fn is not None else ""
        message = (f"`{ctx.code(node).strip()}` is read{where} for a term added to the loss: `.data` is outside autograd, "
                   f"so the term contributes no gradient; drop `.data`")
        contract = {"kind": "gains-grad", "setup": setup, "model": model, "call": call_code}
        if term is not None:
            # an inline term: the verifier evaluates the old and the new term text
            old = ctx.code(term).strip()
            new = cst.Module([]).code_for_node(term.visit(_DropData(node))).strip()
            contract.update(call=None, call_old=old, call_new=new)
        fix = ctx.fix("drop `.data`", [Edit(node, node.value)], Safety.UNSAFE, contract)
        return ctx.finding(node, message, fix)


def _state_dict_method_term(index, flow, call: cst.Call):
    """(method, its returned value, the `self.state_dict()` call) for `model.weight_penalty(1e-2)` in the loss,
    `model` an instance of a module class of the file whose method returns a value built only from
    `state_dict()` tensors (analysis/state_dict_terms.py)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    ctor = flow.classify(func.value)[1]
    if ctor is None or ctor not in index.module_classes:
        return None
    fn = index.method(ctor, func.attr.value)
    if fn is None:
        return None
    sd = state_dict_call(fn, call, index)
    if sd is None:
        return None
    returned = next(s.value for line in fn.body.body if isinstance(line, cst.SimpleStatementLine)
                    for s in line.body if isinstance(s, cst.Return))
    return fn, returned, sd


def _new_leaf(value) -> bool:
    """`Variable(x, requires_grad=True)`, `torch.tensor(x, requires_grad=True)`, `x.requires_grad_()`,
    `x.detach().requires_grad_(True)`: a tensor that starts a graph of its own."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
        return not value.args or code_of(value.args[0].value) == "True"
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    if name in ("Variable", "tensor"):
        return any(a.keyword is not None and a.keyword.value == "requires_grad" and code_of(a.value) == "True"
                   for a in value.args)
    return False


def _rewrapped_name(value) -> str | None:
    """`mix` for a statement `mix.requires_grad_()` / `mix.requires_grad_(True)`."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            value.func.attr.value == "requires_grad_" and isinstance(value.func.value, cst.Name) and _new_leaf(value):
        return value.func.value.value
    return None


class _DropData(cst.CSTTransformer):
    def __init__(self, target):
        super().__init__()
        self.target = target

    def on_leave(self, original, updated):
        return updated.value if original is self.target else updated


def _term_of(value: cst.BaseExpression, node: cst.CSTNode) -> cst.BaseExpression:
    """The additive term of `value` that holds `node` (`1e-4 * w.data.pow(2).sum()` in `ce + ...`)."""
    cur = value
    while isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, (cst.Add, cst.Subtract)):
        for side in (cur.left, cur.right):
            if contains(side, node):
                cur = side
                break
        else:
            break
    return cur



RULE = DataReadInLoss
