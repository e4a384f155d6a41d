"""GF208 history-accumulation: `total += loss` (or a meter that adds the loss tensor) keeps every
iteration's autograd graph alive."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.expressions import _walk, code_of, tensor_attribute_uses, needs_tensor, tensor_slot_total, \
    use_needing_tensor
from gradfix.analysis.iteration import iterations
from gradfix.analysis.kept_history import kept_backpropagated, meter_updates
from gradfix.analysis.loops import backward_target
from gradfix.analysis.loopedits import train_loop_contract
from gradfix.analysis.helper_calls import call_returns_number, is_stub_call
from gradfix.analysis.names import shorten
from gradfix.analysis.numbers import bound_values, fresh_constant, is_number
from gradfix.analysis.trainstep import literal_number, names_in
from gradfix.analysis.tree import contains, if_branches
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_LOSS_SUFFIXES = ("Loss",)


class HistoryAccumulation(Rule):
    id = "GF208"
    name = "history-accumulation"
    summary = "A running total adds the loss tensor itself, keeping each iteration's graph alive"
    docs = RuleDocs(
        what=(
            "Finds `total += loss` (or `total = total + loss`, `total += loss * x.size(0)`, or `costs[i] += loss` into "
            "a slot of a tensor every binding of which that reaches the statement is a fresh torch tensor, "
            "`costs = torch.zeros(n)`: each write records a CopySlices node that chains the graphs; a numpy array "
            "converts each value to a float and is left alone; also, detect only, `totals[k] += losses[k]` into an entry of a dict "
            "every binding of which that reaches the statement is a mapping of numbers made before the training loop, "
            "`{\"seg\": 0.0, \"occ\": 0.0}`, `defaultdict(float)`, `defaultdict(lambda: torch.tensor(0.0))`, "
            "`dict.fromkeys(keys, 0.0)`: the entry becomes the tensor plus the old total, where the value may also be "
            "the value of a loop over a dict of loss terms, `for k, v in loss_dict.items()` with every value of "
            "`loss_dict` reading the loss or a model output; an empty dict, a dict made inside the training loop, "
            "and `.item()` / `.detach()` values are left alone) in a training loop where "
            "`loss` is the tensor backpropagated in that iteration (or a term of it: a model output, also one "
            "unpacked from a tuple `out, aux = model(x)`, or a loss recomputed from one, `total += criterion(out, "
            "y)`) and `total` is never backpropagated itself, directly or as a term of the backpropagated value (an "
            "entropy bonus summed over a rollout and subtracted in the loss keeps its graph on purpose). "
            "What an environment's `step()` returns (a receiver from `gym.make`, or named `env`) is numbers, "
            "whatever action tensor it was handed (`score += reward`). `total += loss.item()`, `float(loss)`, `loss.detach()`, a sum of per-chunk "
            "losses that is backpropagated once, and totals of the batch itself or of sizes (`seen += len(x)`, "
            "`running += loss.item() * x.size(0)`) are left alone, and so are values shown to be Python numbers "
            "(a helper of the file whose every `return` gives one, such as an accuracy ending in `.item()` or a "
            "metric summing `math.log` terms, or such a helper of another file of the project called through its "
            "module or an imported name, `correct += utils.pair_hits(d, same, m)` returning a sum of `.item()` "
            "counts; also a helper whose return is a number once its parameters are bound to this call's arguments, `hits / size` with `hits = ....sum().item()` and `size` handed `len(dataset)`, and a helper that is an exercise's fill-in stub, a body of `pass` or `raise` or every `return` a `_____` placeholder nothing binds: it computes nothing from the output it is handed; and a `loss` name rebound to such a helper's result before the "
            "`+=`, or rebound to a value that leaves autograd, `loss = loss.detach().cpu().numpy()`, or an output of a "
            "module whose `forward`, in this file or another of the project, returns it as Python numbers or a list "
            "of them on every `return`: `loss, accs = contrast(z, c)` with `accs.append(acc.item())` in that forward, "
            "then `mean_accs += np.array(accs)`: a list of floats holds no graph), an output "
            "of a callable not shown to be a module that the loss does not read (`loss, per_class = "
            "criterion(out, y)`, `total += per_class[0]`: a criterion given as a parameter may return numbers "
            "or arrays there), a total bound to a dict or set (`side = {k: 0. for k in keys}`: adding a tensor to it raises TypeError, so no graph is kept), "
            "a total that is an ndarray numpy made (`board = np.zeros(k)` for every binding that reaches the `+=`, and no "
            "other binding of it in the loop: `array += tensor` raises TypeError and arrays or numbers keep it an array, so "
            "`board += self.score(out, y)` holds no graph whatever the method reads; a numpy scalar, `np.float64(0)` or "
            "`np.sum(a)`, is no array: adding the loss hands back a tensor with its graph, reported), "
            "a total reset to a number or a new constant tensor on every optimisation step around a loop "
            "that runs no step itself (`step_loss = torch.tensor(0.0)` before the micro-batches of one "
            "gradient-accumulation step, per-layer losses summed in an LBFGS closure, `score = 0; for sl in losses: score += "
            "sl.backward()`: no graph outlives the step), a total set to a fresh constant by a statement of the training "
            "loop's own body (`loss_seg = 0` at the top of each batch, then `loss_seg += ce(out_k, y)` over the batch's "
            "outputs: one batch's sum, dropped at the next reset), or of a block inside it that also holds the "
            "accumulation after the reset (the body of `if len(xs) == len(xt):` guarding the whole step, a `with` "
            "or `try` body); a reset under an `if` that the accumulation is outside of, every 50 batches, or in "
            "the other branch of that `if`, still spans iterations and is reported, a dict entry rebound to a number before it is added (`for k, v in d.items(): "
            "d[k] = v.item()`, then `total += d['loss']`), and a string built with `+=` (`text += '{:.4f}'.format(v)`, "
            "an f-string, `'%.3f' % v`), "
            "the value of a torchmetrics classification metric (`acc += acc_fn(out, y)` with `acc_fn = "
            "Accuracy(...)`, or with `acc_fn` a parameter every call of whose function, in this file or another "
            "file of the project, passes such a metric, also through a function that hands its own parameter on: "
            "`train(..., precision_fn=BinaryPrecision().to(dev))` in train.py: computed from thresholded or "
            "argmax'ed predictions, it has no graph; a parameter some call fills with anything else stays "
            "reported), a value whose "
            "every part that reads the model output or loss is an integer or boolean tensor or follows only from one "
            "(`argmax`/`argmin`, `eq` and `==` and the other comparisons, `.long()`, the indices `torch.max(out, 1)[1]` "
            "or `out.topk(5).indices`, then `.float()`, `.sum()`, `.mean()` or arithmetic with numbers: `acc += "
            "accuracy(out, y) * n` with a helper returning `torch.eq(out.argmax(1), y).float().mean()`; such a tensor "
            "cannot require grad, and neither can any op all of whose inputs are such values; an accuracy-named helper the "
            "file does not define, imported or in a notebook cell that does not parse, is taken to return a count "
            "(`accuracy`, `top1_acc`, `count_correct`, also camelCase, `calcAccuracy`, and through an imported module, "
            "`utils.accuracy(out, y)`; a method of `self` or of a local object is read, not trusted); "
            "`torch.max(out, 1)[0]`, the values, keeps the graph and is reported), and an "
            "accumulation under `with torch.no_grad():` (autograd records nothing there, so the "
            "total never gets a graph). Also finds `meter.update(loss)` (any method, the "
            "loss or a term of it passed as it is) when `meter` is an instance of a class of this file whose method "
            "adds that parameter unchanged (at most scaled) into an attribute (`self.sum += val * n`, "
            "`self.values.append(val)`), also a clone of the loss (`meter.add(loss.clone())`: a clone keeps the graph) and a "
            "value the method passes through a function of this file whose every `return` is its parameter at most cloned "
            "or scaled (`self.sum += all_reduce(val)` with `return t.clone() / world`); left alone when the method converts it (`.item()`, `float(...)`, a "
            "`torch.is_tensor` test) or rebinds it, keeps only the latest value, or the class is defined elsewhere. Also (detect only) `lst.append(y)` in the loop body where `y` is the "
            "very binding the iteration backpropagates (`y.backward()`), or holds it (`y[\"loss\"].backward()`, a "
            "step's returned dict), and `lst` is an empty list made outside every loop of the scope and never rebound in the loop "
            "(also an entry of a dict display made there, `curves = {\"train\": [], ...}` then `curves[\"train\"].append(loss)`, "
            "unless the loop replaces that entry or the display merges another dict): "
            "the list keeps every step's loss tensor and graph; also when the appended value is the very item the "
            "iteration backpropagates (`out[\"loss\"].backward()`, then `losses.append(out[\"loss\"])`), and when the "
            "list is made in an epoch loop around a training loop that steps the optimizer (`for epoch ...: losses = []`: "
            "it holds every step of the epoch); left alone for `.item()` / `.detach()` values, a "
            "list made inside the training loop, or in a loop around one that steps no optimizer (per batch around "
            "micro-batches: dropped at the step), and a backward with `retain_graph` (a later backward over the list may be "
            "meant). In a file that defines, or imports from the project, a class with its own `backward()` method that is no autograd Function, no nn.Module and no wrapper calling autograd (NumPy-from-scratch course code), `x.backward()` is autograd's only on a receiver shown to be a tensor or a call's result: `model.backward(dout)` there is the course's method, and nothing is reported for it."
        ),
        why=(
            "`loss` carries its `grad_fn`, so `total` becomes a tensor whose graph links to every iteration's graph: "
            "the activations of all batches stay in memory until `total` is dropped (memory grows every step, then "
            "out-of-memory), and the logged value is a tensor. PyTorch FAQ: \"Don't accumulate history across your "
            "training loop\"."
        ),
        example="total_loss += loss",
        fixed_example="total_loss += loss.item()",
        fix=(
            "Adds `.item()` to the loss name in the accumulated expression (or to the accumulated criterion call). "
            "When the scope later reads a tensor attribute of the total (`total.item()`, `(total / n).detach()`), "
            "it adds `.detach()` instead: `.item()` would make the total a float and those calls raise "
            "AttributeError, while a detached tensor drops the graph and keeps every later use working. It "
            "detaches too when the total (or a name computed from it) leaves the function or is kept: returned "
            "or yielded, also inside a dict or tuple, stored in an attribute or a container, or passed to a call "
            "that is not a print, format or logging call (`return {\"loss\": total / n}` with a caller calling "
            "`.cpu()` on it); a returned total still gets `.item()` when every call of the function is in this "
            "file and only prints, formats, logs or compares the result. "
            "Offered when the name is the loss that `.backward()` receives without a gradient argument (a scalar, "
            "also scaled by a literal: `(loss / 2).backward()`), a criterion / `F.*_loss` call result without "
            "`reduction='none'`, or a sum of such terms and number literals; otherwise reported without a fix. The "
            "meter case is detect only (code reading the meter's total may expect a tensor)."
        ),
        fix_safety=(
            "Safe: gradients, parameters and the accumulated number are unchanged; `total` becomes a Python float "
            "with `.item()`, or stays a tensor (without the graph) with `.detach()`, the form chosen when later "
            "code calls tensor methods on it."
        ),
        verification=(
            "`train-loop` (see GF202): `equivalent` when every optimizer step sees the same learning rates, gradients "
            "and parameters, and the accumulated total per epoch is the same number in both versions (the rewrite's "
            "no longer holding the graph)."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            if it.loop is None or it.backward is None:
                continue
            backed = _backpropagated_names(it)
            for e in it.events:
                if e.op != "accumulate" or e.info.get("how") != "tensor" or id(e.small) in seen:
                    continue
                total = e.recv
                if total in backed or _recomputed_without_grad(it, e) or _one_step_total(it, e) or \
                        _helper_without_graph(it, e) or _string_built(e.small) or _reset_each_iteration(it, e) or \
                        _entry_made_number(it, e) or _mapping_total(it, e):
                    continue
                seen.add(id(e.small))
                if isinstance(getattr(e.small, "target", None), cst.Subscript) and \
                        not tensor_slot_total(it.flow, e.small):
                    # `totals[k] += losses[k]` into a dict of numbers (number_dict_total): detect only, code
                    # reading the totals later may expect tensors
                    message = (f"`{code_of(e.small)}` adds a loss tensor into an entry of `{total}`, a dict of "
                               f"numbers made before the loop: the entry becomes a tensor that keeps the autograd "
                               f"graph of every iteration alive (memory grows each step); add `.item()` of the "
                               f"value instead (detect only)")
                    yield ctx.finding(e.small, message, None)
                    continue
                if isinstance(getattr(e.small, "target", None), cst.Subscript):
                    # `costs[i] += loss` into a torch tensor: it stays a tensor whatever is added
                    message = (f"`{code_of(e.small)}` writes the loss tensor into a slot of the tensor `{total}`: "
                               f"each write records a CopySlices node, so `{total}` keeps the autograd graph of "
                               f"every iteration alive (memory grows each step); accumulate `.item()` instead")
                    yield ctx.finding(e.small, message, self._fix(ctx, it, e, "item"))
                    continue
                # a total read later as a tensor (`total.item()`, `(total / n).detach()`) must stay one
                tensor_uses = tensor_attribute_uses(it.scope, total)
                handed_on = None if tensor_uses else use_needing_tensor(
                    ctx.index.parents, it.scope, total, returns_ok=_callers_take_numbers(ctx.index, it.scope))
                keep_tensor = bool(tensor_uses) or handed_on is not None
                handing = handed_on and (ctx.index.enclosing(handed_on, (cst.BaseSmallStatement,)) or handed_on)
                instead = (f"accumulate `.detach()` instead (`.item()` would break the later tensor use "
                           f"`{code_of(tensor_uses[0])}`)" if tensor_uses else
                           f"accumulate `.detach()` instead (`.item()` would make it a float where "
                           f"`{shorten(code_of(handing), 60)}` hands it on)" if keep_tensor else
                           "accumulate `.item()` instead")
                what = "the loss tensor itself" if _adds_loss(it, e) else \
                    "a tensor computed from the model's output with its graph"
                message = (f"`{code_of(e.small)}` adds {what}: `{total}` keeps the autograd graph of "
                           f"every iteration alive (memory grows each step) and becomes a tensor; {instead}")
                yield ctx.finding(e.small, message, self._fix(ctx, it, e, "detach" if keep_tensor else "item"))
            for call, held in kept_backpropagated(ctx.index, it):
                if id(call) in seen:
                    continue
                seen.add(id(call))
                lst = code_of(call.func.value)
                message = (f"`{code_of(call)}` keeps {held} in `{lst}`, a list made outside the training loop: every "
                           f"iteration's loss tensor stays alive with its autograd graph (memory grows each step); "
                           f"store `.item()` or `.detach()` of the loss instead (detect only)")
                yield ctx.finding(call, message, None)
            for call, arg, attr in meter_updates(it):
                if id(call) in seen:
                    continue
                seen.add(id(call))
                cloned = not any(a.value is arg for a in call.args)  # `meter.add(loss.clone())`
                handed = "a clone of the loss tensor (a clone keeps its graph)" if cloned else "the loss tensor itself"
                message = (f"`{code_of(call)}` hands {handed} to `{code_of(call.func)}`, which adds "
                           f"it into `self.{attr}`: the meter keeps the autograd graph of every iteration alive "
                           f"(memory grows each step) and its average becomes a tensor; pass "
                           f"`{code_of(arg)}.item()` instead")
                yield ctx.finding(call, message, None)

    def _fix(self, ctx, it, e, method: str):
        small = e.small
        value = small.value
        if isinstance(small, cst.Assign):
            binop = value
            value = binop.right if isinstance(binop.left, cst.Name) and binop.left.value == e.recv else binop.left
        names = it.loss_names()
        target = None
        if isinstance(value, cst.Name) and value.value in names:
            target = value
        elif isinstance(value, cst.BinaryOperation):
            sides = [value.left, value.right]
            hits = [s for s in sides if isinstance(s, cst.Name) and s.value in names]
            others = [s for s in sides if not (isinstance(s, cst.Name) and s.value in names)]
            if len(hits) == 1 and not any(names_in(o) & names for o in others):
                target = hits[0]
        if target is None and isinstance(value, cst.Call) and not value.lpar and _scalar_loss_call(it, value):
            # `total += criterion(out, y)`: the loss recomputed from a model output
            item = cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))
            return ctx.fix(f"accumulate `{code_of(value)}.{method}()`", [Edit(value, item)], Safety.SAFE,
                           train_loop_contract(it))
        if target is None or not _is_scalar_loss(it, target.value):
            return None
        item = cst.Call(func=cst.Attribute(value=target, attr=cst.Name(method)))
        return ctx.fix(f"accumulate `{target.value}.{method}()`", [Edit(target, item)], Safety.SAFE,
                       train_loop_contract(it))


def _adds_loss(it, e) -> bool:
    """Whether what `total += v` adds is the loss (a name the iteration backpropagates or builds the loss from, or a
    loss call), not another tensor of the model output (`dice_fn(pred, y)`): the message says which."""
    value = e.small.value
    if isinstance(e.small, cst.Assign) and isinstance(value, cst.BinaryOperation):
        value = value.right if isinstance(value.left, cst.Name) and value.left.value == e.recv else value.left
    while isinstance(value, cst.BinaryOperation):   # `loss * n`
        value = value.left if not isinstance(value.left, (cst.Integer, cst.Float)) else value.right
    if isinstance(value, cst.Name):
        return value.value in it.loss_names()
    if isinstance(value, cst.Call):
        return _scalar_loss_call(it, value) is not None
    return True


def _callers_take_numbers(index, scope) -> bool:
    """Every call of the function `scope` is in this file, and each only prints, formats, logs or compares
    what it returns (`print(train_epoch(loader))`): a total it returns may become a float."""
    if not isinstance(scope, cst.FunctionDef) or index.callgraph.called_elsewhere(scope):
        return False
    sites = index.callgraph.sites(scope)
    return bool(sites) and not any(needs_tensor(index.parents, flow.scope, call) for flow, _st, call, _b in sites)


def _backpropagated_names(it) -> set[str]:
    """Names that reach some backward call in the scope, directly or through the names the backpropagated
    value is built from: a chunk sum backpropagated once, or an entropy bonus summed over a rollout and
    subtracted in the loss (`loss = pg + 0.5 * vf - 0.01 * entropy`), is a term of the loss, not history."""
    out = set()
    for node in _walk(it.scope):
        if type(node) is cst.Call:
            t = backward_target(node, it.flow)
            if t is not None:
                out |= names_in(t[0])
    values: dict[str, list] = {}
    for b in it.flow.bindings:
        if b.value is not None and isinstance(b.value, cst.CSTNode):
            values.setdefault(b.name, []).append(b.value)
    todo = list(out)
    while todo:
        for value in values.get(todo.pop(), ()):
            for name in names_in(value) - out:
                out.add(name)
                todo.append(name)
    return out


def _added_value(small):
    if isinstance(small, cst.AugAssign):
        return small.value
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation):
        return small.value.right
    return None


def _string_built(small) -> bool:
    """`text += '{}: {:.4f}'.format(k, v)`, `text += f"{v:.3f}"`, `text += '%.3f' % v`: a string is built,
    whatever it formats; no tensor is added."""
    value = _added_value(small)
    strings = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
    if isinstance(value, strings):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "format":
        return isinstance(value.func.value, strings)
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo) and \
        isinstance(value.left, strings)


def _mapping_total(it, e) -> bool:
    """`other = {"w%s" % k: 0. for k in widths}` then `other += loss`: a binding of the total is a dict or set
    (display, comprehension, `dict()`), and adding a tensor to it raises TypeError: no graph is kept, and
    `.item()` would not make the line run either."""
    if isinstance(getattr(e.small, "target", None), cst.Subscript):
        return False
    for b in it.flow.bindings:
        if b.name != e.recv:
            continue
        value = b.value
        if type(value) in (cst.Dict, cst.DictComp, cst.Set, cst.SetComp) or (
                type(value) is cst.Call and type(value.func) is cst.Name and
                value.func.value in ("dict", "set", "defaultdict", "OrderedDict", "Counter")):
            return True
    return False


def _reset_each_iteration(it, e) -> bool:
    """`loss_seg = 0` as a statement of the training loop's own body, then `loss_seg += ce(out_k, y)` over
    this batch's outputs: the total is rebound to a fresh constant on every iteration, so it sums one
    batch's terms and the graph it holds is dropped at the next reset. The reset may sit in a block inside
    the body (an `if` guarding the whole step) when that block also holds the accumulation after it; a reset
    under an `if`, every 100 iterations, with the accumulation outside it, is not this: the total spans
    iterations there."""
    flow, loop = it.flow, it.loop
    acc = flow.step_of.get(id(e.small))
    if acc is None or loop not in acc.loops:
        return False
    before = [b for b in flow.bindings if b.name == e.recv and 0 <= b.step < acc.index]
    if not before:
        return False
    st = flow.steps[before[-1].step]
    return isinstance(st.node, cst.Assign) and _reset_precedes(_body(loop), st.line, acc.line) and \
        fresh_constant(it.index, st.node.value)


def _body(loop) -> list:
    body = loop.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]


def _reset_precedes(stmts: list, reset, acc) -> bool:
    """The reset statement lies in a block of the loop's body (the body itself, or a branch of an `if`, a
    `with`, a `try` inside it) that also holds the accumulation after it: every pass through the
    accumulation in an iteration has run the reset first. `if len(xs) == len(ys): total = 0; ...; total
    += term` is such a block; `if i % 50 == 0: total = 0` followed by `total += loss` outside that `if` is
    not (the total spans the iterations between resets)."""
    for k, stmt in enumerate(stmts):
        if stmt is reset:
            return any(contains(s, acc) for s in stmts[k:])
        if isinstance(stmt, cst.BaseCompoundStatement) and contains(stmt, reset):
            return any(_reset_precedes(block, reset, acc) for block in _blocks_of(stmt))
    return False


def _blocks_of(stmt) -> list[list]:
    """The statement lists directly under a compound statement: an `if` chain's branches, a `with`'s or a
    loop's body and `else`, a `try`'s body, handlers, `else` and `finally`."""
    found = []
    parts = [stmt.body]
    if isinstance(stmt, cst.If):
        parts = [owner.body for _, owner in if_branches(stmt)]
    elif isinstance(stmt, cst.Try):
        parts += [h.body for h in stmt.handlers]
        parts += [x.body for x in (stmt.orelse, stmt.finalbody) if x is not None]
    elif isinstance(stmt, (cst.For, cst.While)) and stmt.orelse is not None:
        parts.append(stmt.orelse.body)
    for body in parts:
        if isinstance(body, cst.IndentedBlock):
            found.append(list(body.body))
    return found


def _entry_made_number(it, e) -> bool:
    """`total += d["loss"]` after `for k, v in d.items(): d[k] = v.item()` (or `d["loss"] = d["loss"].item()`):
    the entry was rebound to a Python number before it is added."""
    value = _added_value(e.small)
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1 and
            isinstance(value.slice[0].slice, cst.Index)):
        return False
    name, key = value.value.value, value.slice[0].slice.value
    flow = it.flow
    acc = flow.step_of.get(id(e.small))
    if acc is None:
        return False
    bound = [b.step for b in flow.bindings if b.name == name and 0 <= b.step < acc.index]
    for st in flow.steps[(bound[-1] + 1 if bound else 0): acc.index]:  # after `d` itself was last bound
        node = st.node
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and _to_number(node.value)):
            continue
        target = node.targets[0].target
        if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and
                target.value.value == name and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)):
            continue
        slot = target.slice[0].slice.value
        if _same_literal(slot, key):
            return True
        if isinstance(slot, cst.Name) and any(_iterates_keys(lp, name, slot.value) for lp in st.loops):
            return True
    return False


def _to_number(value) -> bool:
    """`v.item()`, `float(v)`: a Python number."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute):
        return value.func.attr.value == "item" and not value.args
    return isinstance(value.func, cst.Name) and value.func.value == "float"


def _same_literal(a, b) -> bool:
    return isinstance(a, cst.SimpleString) and isinstance(b, cst.SimpleString) and \
        a.evaluated_value == b.evaluated_value


def _iterates_keys(loop, name: str, key: str) -> bool:
    """`for key in d`, `for key in d.keys()`, `for key, v in d.items()`, also under `enumerate(...)`."""
    if not isinstance(loop, cst.For):
        return False
    it, target = loop.iter, loop.target
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and it.args:
        it = it.args[0].value
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            target = target.elements[1].value
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "keys"):
        it_name = it.func.value
        if it.func.attr.value == "items" and isinstance(target, cst.Tuple) and target.elements:
            target = target.elements[0].value
    else:
        it_name = it
    return isinstance(it_name, cst.Name) and it_name.value == name and isinstance(target, cst.Name) and \
        target.value == key


def _one_step_total(it, e) -> bool:
    """`score = 0; for sl in layer_losses: score += sl.backward()` in a closure or an optimisation step, or
    `batch_loss = torch.tensor(0.0)` before the micro-batches of one gradient-accumulation step: the loop
    holding the backward runs no optimizer step, and the total is reset to a number or a new constant tensor
    outside that loop on every call or step, so it sums one step's terms and no graph outlives the step."""
    loop = it.loop
    if any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
           for n in _walk(loop.body)):
        return False
    flow = it.flow
    acc = flow.step_of.get(id(e.small))
    if acc is None:
        return False
    before = [b for b in flow.bindings if b.name == e.recv and 0 <= b.step < acc.index]
    if not before:
        return False
    reset = before[-1]
    st = flow.steps[reset.step]
    if loop in st.loops or not isinstance(st.node, cst.Assign) or not fresh_constant(it.index, st.node.value):
        return False
    outer = acc.loops[: acc.loops.index(loop)] if loop in acc.loops else None
    if outer is None or tuple(st.loops) != tuple(outer):
        return False
    # the reset and the step share an iteration: a step after the loop in the same block of loops, or the
    # scope is a closure handed to `opt.step(closure)`
    for other in flow.steps[acc.index + 1:]:
        if tuple(other.loops) == tuple(outer) and any(
                isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
                for n in _walk(other.node)):
            return bool(outer) or isinstance(it.scope, cst.FunctionDef)
    return isinstance(it.scope, cst.FunctionDef) and _closure_of_step(it.index, it.scope)


def _helper_without_graph(it, e) -> bool:
    """`acc += batch_acc(out, y, n)` where this call of the file's helper returns a Python number (`hits / n`
    with `hits = ....sum().item()`, `n` handed a number here) or the helper is an exercise's fill-in stub
    (analysis/helper_calls.py): the value added holds no graph, whatever model output it was handed."""
    value = getattr(e.small, "value", None)
    if not isinstance(value, cst.Call):
        return False
    if is_stub_call(it.index, value):
        return True
    acc = it.flow.step_of.get(id(e.small))
    if acc is None:
        return False
    here = bound_values(it.flow, acc.index)
    loss_names = it.loss_names()

    def names(name: cst.Name):
        own = here(name)
        if own is not None:
            return own
        if any(b.name == name.value for b in it.flow.bindings) or it.flow.scope is it.index.module:
            return None
        # a module-level name the function only reads (`train_n = len(loader.dataset)` in another cell)
        module = [b for b in it.index.flow(it.index.module).bindings if b.name == name.value]
        values = [b.value for b in module]
        return values if module and all(isinstance(v, cst.BaseExpression) for v in values) else None

    def arg_is_number(arg) -> bool:
        return not (names_in(arg) & loss_names) and is_number(it.index, arg, names)

    return call_returns_number(it.index, value, arg_is_number)


def _closure_of_step(index, fn: cst.FunctionDef) -> bool:
    """`fn` is passed to an optimizer's `step(...)` (LBFGS-style closure) somewhere in the file."""
    name = fn.name.value
    for node in _walk(index.module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "step" \
                and any(isinstance(a.value, cst.Name) and a.value.value == name for a in node.args):
            return True
    return False


def _recomputed_without_grad(it, e) -> bool:
    """The loss names read by the accumulation are bound under no_grad (a re-evaluation after the step)."""
    names = it.loss_names()
    for node in _walk(e.small):
        if isinstance(node, cst.Name) and node.value in names and node.value != e.recv:
            b = it.flow.load_binding.get(id(node))
            if b is not None and b.no_grad:
                return True
    return False


def _is_scalar_loss(it, name: str, depth: int = 0) -> bool:
    tl = it.tl
    if not it.backward.node.args and _scaled_name(tl.loss, name):
        return True  # `loss.backward()` / `(loss / 2).backward()`: backward() without a gradient needs a scalar
    for b in it.flow.bindings:
        if b.name != name:
            continue
        if isinstance(b.value, cst.Call):
            verdict = _scalar_loss_call(it, b.value)
            if verdict is not None:
                return verdict
        elif isinstance(b.value, cst.BinaryOperation) and depth < 3 and _scalar_terms(it, b.value, depth + 1):
            return True  # `loss = F.cross_entropy(out, y) + 0.3 * F.cross_entropy(aux, y)`
    return False


def _scaled_name(expr, name: str) -> bool:
    """`name`, or `name` times / divided by number literals."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        if literal_number(expr.right) is not None:
            return _scaled_name(expr.left, name)
        if isinstance(expr.operator, cst.Multiply) and literal_number(expr.left) is not None:
            return _scaled_name(expr.right, name)
    return False


def _scalar_terms(it, expr, depth: int) -> bool:
    """Every term is a scalar loss (a reducing loss call, a scalar loss name) or a number literal."""
    if literal_number(expr) is not None:
        return True
    if isinstance(expr, cst.Call):
        return _scalar_loss_call(it, expr) is True
    if isinstance(expr, cst.Name):
        return _is_scalar_loss(it, expr.value, depth)
    if isinstance(expr, cst.BinaryOperation) and \
            isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        return _scalar_terms(it, expr.left, depth) and _scalar_terms(it, expr.right, depth)
    return False


def _scalar_loss_call(it, call: cst.Call) -> bool | None:
    """True for a call of a loss function that reduces to a scalar (`criterion(out, y)`, `F.cross_entropy(...)`),
    False for one with `reduction="none"`, None when the call is not known to be a loss."""
    if any(a.keyword is not None and a.keyword.value == "reduction" and "none" in code_of(a.value)
           for a in call.args):
        return False
    func = call.func
    q = code_of(func)
    if isinstance(func, cst.Name):
        if any(x.name == func.value and (x.ctor or "").endswith(_LOSS_SUFFIXES) for x in it.flow.bindings):
            return True
        if "loss" in func.value.lower() or "criterion" in func.value.lower():
            return True
    if (it.index.imports.resolve(q) or "").startswith("torch.nn.functional.") and \
            ("loss" in q or "entropy" in q or "nll" in q):
        return True
    return None



RULE = HistoryAccumulation
