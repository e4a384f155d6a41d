"""GF101 inplace-on-activation: an in-place op on a tensor autograd still needs."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import argument_for
from gradfix.analysis.expressions import code_of
from gradfix.analysis.graph_walks import backward_ran_since, later_backwards_skip
from gradfix.analysis.inplace_modules import inplace_callee, is_dropout
from gradfix.analysis.leaves import leaf_at
from gradfix.analysis.list_saves import listcomp_subscripted, saved_list_element_at
from gradfix.analysis.names import qualname
from gradfix.analysis.param_types import untyped_input, used_as_tensor
from gradfix.analysis.reaching import chain_tests, reaching, steps_in
from gradfix.analysis import torchapi
from gradfix.analysis.torchapi import INPLACE_METHODS, is_inplace_method
from gradfix.analysis.trainstep import torch_alias
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_AUG_OPS = {
    cst.DivideAssign: (cst.Divide, "/="),
    cst.MultiplyAssign: (cst.Multiply, "*="),
    cst.AddAssign: (cst.Add, "+="),
    cst.SubtractAssign: (cst.Subtract, "-="),
    cst.PowerAssign: (cst.Power, "**="),
}
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary,
          cst.SimpleString, cst.ConcatenatedString, cst.List, cst.Tuple, cst.Dict, cst.Set)


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Wrap `expr` unless it is an atom or already parenthesised: `x /= a + b` is `x = x / (a + b)`."""
    if expr.lpar or isinstance(expr, _ATOMS):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class InplaceOnActivation(Rule):
    id = "GF101"
    name = "inplace-on-activation"
    summary = "In-place op on a tensor that autograd saved for backward, or that another live name aliases"
    docs = RuleDocs(
        what=(
            "Finds an augmented assignment (`/=`, `*=`, `+=`, `-=`, `**=`) or an in-place tensor method "
            "(`div_`, `mul_`, `clamp_`, `sigmoid_`, ...) on a tensor in differentiable code when the hazard "
            "can be shown: an earlier op saved that tensor for backward (`norm`, `pow` and tensor-tensor `mul` "
            "save their input; `sigmoid`, `tanh`, `exp`, `softmax`, `relu` save their output, and so do "
            "`nn.ReLU`/`nn.Sigmoid` modules, an `nn.Sequential` whose last layer is one, a module class of the file "
            "whose every `forward` return is such an output (`return self.act(self.conv(x))` with `self.act = "
            "nn.ReLU()`, also as a Sequential's last layer; not a class whose activation is chosen at run time, "
            "`nn.ReLU() if relu else nn.Identity()`, nor one returning `act(...) + x`; analysis/output_saves.py), "
            "and LeakyReLU, ELU, "
            "CELU, SELU and RReLU run in place (`nn.LeakyReLU(inplace=True)`; out of place they save their "
            "input); `nn.Linear` saves its input), or another live name shares its storage (`detach()`, a view, plain assignment, "
            "a container or an attribute). Item assignment into a saved tensor (`gate[:, 0] = 1.0`, "
            "`x[mask] = 0`) is an in-place op too and is reported, also a write into one row of a buffer whose other "
            "row a product saved, a view sharing the buffer's version counter (`f[i] = f[i - 1] * w` in a loop over "
            "`range`: the index is a number, a loop counter or arithmetic of numbers, so the read is a view; an index "
            "tensor selects a copy and is left alone), an in-place op on an element of a list whose every element is a "
            "saved output (`laterals = [F.relu(conv(f)) for conv, f in zip(self.lateral, feats)]`, then `laterals[i - 1] "
            "+= up`: a list comprehension of an output-saving call whose argument requires grad, or calls a module of a "
            "ModuleList attribute built from modules with parameters; detect only; left alone when the list is filled or "
            "its items are assigned anywhere in the scope, is bound more than once on the way, or a backward() ran since), and so is a call of an activation or dropout module "
            "built with `inplace=True` (`self.drop = nn.Dropout(0.1, inplace=True)` then `h = self.drop(h)`, "
            "`nn.ReLU(True)`), or built plainly and switched in place later in the same `__init__` (`self.drop.inplace = "
            "True`, or a walk of `self.modules()` setting `m.inplace = True`, under at most `isinstance(m, ...)` tests "
            "naming its class; a switch in another method, or one whose test names other classes, is left alone), "
            "or an `nn.Sequential` whose first layer is one, or of its functional form (`F.relu(h, inplace=True)`) on such a tensor (a ReLU's "
            "output, also an in-place ReLU's: both keep their output for backward). Such an in-place activation (not a "
            "dropout) is also reported when nothing saved its input but a later statement reads that same binding's "
            "values (`h = self.branch(x)` with `nn.Sequential(nn.ReLU(inplace=True), conv)`, then `h + x`): the read "
            "sees the activated values, so a skip connection adds relu(x) instead of x (detect only); left alone: the "
            "name rebound to the result (`x = self.branch(x)`) and reads of only its shape, size, device or dtype. A save counts only when autograd makes "
            "it: grad mode is on and an input of the op requires grad (`a * b` saves `b` only for `a`'s "
            "gradient), the input deriving from a parameter, a module's output, a `requires_grad=True` "
            "tensor, or a function argument that a call site in the file passes such a value for. Left "
            "alone: values that cannot require grad (literals, `arange`/`linspace` grids, integer images, index and length tensors such as the second result of `x.max(dim=1)` or `pad_packed_sequence`, "
            "scheduler tables, batches); code that runs only with grad off (`no_grad` blocks and "
            "decorators, an optimizer's `step()`, `torch.autograd.Function` forward/backward, helpers whose "
            "every call in the file runs under `no_grad`); a save and an in-place op in branches of one "
            "if/elif that exclude each other; copies (`t[idx_tensor]`, `t[mask]`, `.clone()`, "
            "`.to(copy=True)`); an in-place activation or dropout after an op that saves its input, not its "
            "output (Linear, convolution, batch norm, a sum: the usual memory saving); a save by an op whose "
            "result goes only into `.item()`, `.tolist()`, `float()`/`int()`/`bool()` or a comparison, also "
            "through a few out-of-place methods (`while x.norm().item() > 1: x /= 2`): that node is never on a "
            "path to the loss, so backward never reads what it saved; for the alias case, anything but an activation (a buffer, a batch or "
            "the caller's tensor filled through a view is what the code means to do), and an imported module "
            "taken for a container: `torch.add(wx, b)` returns a new tensor, so `torch` never shares `b`'s storage "
            "(a hand-written SGD step `b.data.sub_(lr * b.grad)` after backward is silent); a container or attribute "
            "that holds the very tensor (`params = {\"w\": w}`) shares no storage: the message says it holds the "
            "tensor, and sees the change for that reason. Also reported: an in-place op or item assignment with grad "
            "mode on on a leaf that requires grad (every binding reaching it is `torch.randn(..., "
            "requires_grad=True)`, `nn.Parameter(t)`, or a factory made one by `.requires_grad_()`, with nothing "
            "turning requires_grad off in between; analysis/leaves.py): `w -= lr * w.grad` outside `no_grad` raises "
            "\"a leaf Variable that requires grad is being used in an in-place operation\" (for `w[0] = 1.0`: \"a "
            "view of a leaf Variable ...\"), whatever was saved; a copy such as `.double()` is no leaf, and "
            "updates under `no_grad` or through `.data` are left alone. "
            "Also reported, whatever was saved: an in-place op or item assignment with grad mode on on one of the "
            "views `chunk`, `split` or `unbind` returns (`mean, log_std = out.chunk(2, dim=-1)` then "
            "`log_std.clamp_(-20, 2)`) when the split tensor is shown to require grad and the name is bound only "
            "there: autograd raises in the forward pass (\"... is a view and is being modified inplace ... returns "
            "multiple views\"); left alone: a clone of the piece, a split of a detached tensor or of one not shown "
            "to require grad, `tensor_split` (its pieces may be written), and a name bound again elsewhere in the "
            "scope. "
            "A parameter of a function of the file counts as saved when some call of the function, with grad on, "
            "hands it a name autograd saved there and no backward() ran in between (`y = net(x)` with `net` ending "
            "in `nn.Tanh()`, then `normalise(y)` whose body runs `images.div_(255.0)`); a call under no_grad, an "
            "argument that is not a name, and a module's `forward` are left alone. "
            "A saved tensor also counts when it reaches the in-place op only on the path that skips `if` "
            "statements rebinding the name (`out = self.act(h)` with `nn.LeakyReLU(inplace=True)`, then `if "
            "self.use_dropout: out = self.drop(out)`, `out += x`): reported, naming those `if`s, when every "
            "skipped test is a configuration flag (`self.flag`, `not self.flag`, `self.proj is None`, a parameter) "
            "and no `else` rebinds the name. Left alone: a path around a test of the data or of `self.training` "
            "(not shown to be taken in training), around a loop, or through an `if`/`else` whose every branch "
            "rebinds the name, and a save made only inside the skipped `if`. Also left alone: a write when every "
            "later `backward()` backpropagates a value the scope builds without the written tensor (`ce = "
            "F.cross_entropy(x, y)` first, then a separate `p = F.softmax(x)` edited in place to compare with "
            "`x.grad`, then `ce.backward()`: the graph that saved `p` is never walked); a name the scope does "
            "not bind (other than an import) or a container handed the tensor (`outs.append(p)`) keeps it reported. "
            "Also left alone: a write after every save's graph was walked and freed by a backward() before it, even "
            "when backward() runs again later (a lesson's `out = F.conv2d(x, k)`, `out.backward()`, `k += 1`, "
            "`out = F.conv2d(x, k)`, `out.backward()`: the second graph saved `k` after the change, and the first "
            "cannot be walked again whatever `k` holds); that backward's value must be built, through the "
            "scope's reaching bindings, from what the saving statement computed, without `retain_graph` / "
            "`create_graph`, outside any branch or loop the write is not in. A backward() of an unrelated value "
            "in between, or one that keeps its graph, leaves the write reported."
        ),
        why=(
            "The in-place op bumps the tensor's version counter, so `backward()` raises `RuntimeError: one of "
            "the variables needed for gradient computation has been modified by an inplace operation`. "
            "Measured on the first seed's network (torch 2.13, CPU): `f /= (f.norm(dim=1, keepdim=True) + 1e-6)` "
            "raises; the out-of-place form trains (loss 0.695553). Every alias sees the mutation too, so a "
            "logging copy or a skip connection silently holds the changed values."
        ),
        example="f = self.feat(x)\nf /= (f.norm(dim=1, keepdim=True) + 1e-6)\nreturn self.fc(f)",
        fixed_example="f = self.feat(x)\nf = f / (f.norm(dim=1, keepdim=True) + 1e-6)\nreturn self.fc(f)",
        fix=(
            "Rewrites `f op= rhs` as `f = f op (rhs)`, parenthesising the right side whenever precedence needs it "
            "(`x /= a + b` becomes `x = x / (a + b)`, never `x / a + b`), and `x.div_(y)` as `x = x.div(y)`. "
            "Subscript targets (`x[i] /= c`) are reported without a fix: clone first. In-place modules are reported "
            "without a fix: the `inplace=True` to drop sits in the constructor, which other calls share. On a leaf "
            "that requires grad the fix is never the out-of-place form (`w = w - lr * w.grad` makes `w` a "
            "non-leaf whose `.grad` stays None, so the next update fails): a manual update, a statement alone on "
            "its line that reads `w.grad`, is wrapped in `with torch.no_grad():`; any other write into a leaf is "
            "reported without a fix."
        ),
        fix_safety=(
            "Safe when no other live name shares the tensor: out of place computes what the in-place form "
            "meant. Unsafe when an alias is read later or the tensor came from the caller: the alias keeps "
            "the old values after the rewrite. The verifier decides (a later-read alias gives `failed`). The leaf "
            "update's `torch.no_grad()` wrapping is safe: the original raises before it computes anything, and "
            "under no_grad the same update runs on the same leaf."
        ),
        verification=(
            "`equal`: module check in float64, eval and train mode; outputs, parameter and input gradients and "
            "buffers agree. If the original raises in backward, `fixes-crash`: the rewrite must equal the "
            "original run under `torch.autograd.graph.allow_mutation_on_saved_tensors()`. The leaf update's wrapping "
            "carries the same `equal` contract: checked where the changed code is in a module class or a function "
            "the verifier can run; a manual update in module-level code (the usual place) is `untestable`, so a "
            "verified `apply` takes it only with `--allow-untestable`."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): the flow's in-place ops are augmented assignments, item assignments and
        `x.<name>_()` calls; `_inplace_module` needs `inplace=True` or a positional `True` (`inplace_flag`), or an
        `X.inplace = True` assignment (the pre-pass counts it as a literal True)."""
        shape = facts.augassign or facts.subscript_store or facts.true_arg or any(
            is_inplace_method(a) or a in INPLACE_METHODS for a in facts.called_attrs)
        # and, in one scope, such an op with a value that may require grad: a finding needs
        # `flow.holds(...) is True` in the op's own flow (analysis/gradscopes.py); or, for an element of a list
        # of saved outputs (`_saved_list_element`), a name bound to a list comprehension of calls and subscripted
        return shape and (facts.grad_inplace_scopes or listcomp_subscripted(facts.tree))

    def check(self, ctx):
        for flow in ctx.index.training_code_flows():
            for st, node, binding, target in flow.inplace:
                finding = self._inspect(ctx, flow, st, node, binding, target)
                if finding is not None:
                    yield finding
            for st, call in flow.calls:
                finding = self._inplace_module(ctx, flow, st, call)
                if finding is not None:
                    yield finding

    def _inplace_module(self, ctx, flow, st, call):
        """`self.drop(h)` with `self.drop = nn.Dropout(0.1, inplace=True)`, or `F.relu(h, inplace=True)`, on a
        tensor autograd saved: the same hazard as `h.relu_()`. Detect only (the constructor is elsewhere)."""
        how = inplace_callee(ctx.index, flow, call)
        if how is None or st.no_grad or not call.args or call.args[0].keyword is not None:
            return None
        arg = call.args[0].value
        binding = flow.load_binding.get(id(arg)) if isinstance(arg, cst.Name) else None
        if binding is None or binding.no_grad or not flow.is_tensor(binding):
            return None
        if binding.kind.value == "parameter" or binding.root().kind.value == "parameter":
            return None
        # the call's own save does not count: in place, the activation saves its result instead
        saved = flow.saved_before(binding, st.index, excluding=call)
        if not saved or backward_ran_since(flow, flow.saved_steps(binding, st.index, excluding=call), st.index):
            later = None if is_dropout(how) else _value_read_after(ctx.index, flow, binding, st)
            if later is None:
                return None
            return ctx.finding(call, (
                f"`{ctx.code(call)}` overwrites `{arg.value}` in place ({how}), and `{ctx.code(later)}` reads "
                f"`{arg.value}` again on line {ctx.index.position(later).start.line}: it sees the activated values, not the "
                f"input (a skip connection adds the wrong tensor); drop `inplace=True`"), None)
        return ctx.finding(call, (
            f"`{ctx.code(call)}` overwrites `{arg.value}` in place ({how}), and autograd saved `{arg.value}` for "
            f"backward ({saved[0]}): backward() raises \"modified by an inplace operation\""
            f"{' in training mode' if 'ropout' in how else ''}; drop `inplace=True`"),
            None)

    def _inspect(self, ctx, flow, st, node, binding, target):
        if st.no_grad or binding is None or binding.no_grad or "." in binding.name:
            return None  # attribute targets (`self.h`) may be buffers or state: not ours to rewrite
        leaf = self._leaf_inplace(ctx, flow, st, node, binding, target)
        if leaf is not None:
            return leaf
        split = _multi_view_write(ctx, flow, st, node, target)
        if split is not None:
            return split
        listed = _saved_list_element(ctx, flow, st, node, binding, target)
        if listed is not None:
            return listed
        root = binding.root()
        if not flow.is_tensor(binding) or binding.kind.value == "parameter" or root.kind.value == "parameter":
            return None
        if isinstance(node, cst.Assign) and untyped_input(root) and not used_as_tensor(ctx.index, flow, root):
            return None  # `top = feats; top[i - 1] = ...`: a forward's input may be a list of maps (a slot, no write)
        if isinstance(node, cst.Assign):
            op_text = "="  # `gate[:, 0] = 1.0` writes into the tensor
        elif isinstance(node, cst.AugAssign):
            if type(node.operator) not in _AUG_OPS:
                return None
            op_text = _AUG_OPS[type(node.operator)][1]
        else:
            meth = node.func.attr.value
            if meth not in INPLACE_METHODS:
                return None
            outer = ctx.index.parents.get(ctx.index.parents.get(node))
            if isinstance(outer, cst.Call) and outer.func.value is node and outer.func.attr.value in INPLACE_METHODS:
                return None  # `x.add_(1).div_(2)`: the outermost call reports the chain
            calls, base = _inplace_chain(node)
            op_text = "".join(f".{c.func.attr.value}()" for c in reversed(calls))
            if len(calls) > 1 and isinstance(base, cst.Name):
                target = base  # the chain writes into `x` once per call
        saved = flow.saved_before(binding, st.index)
        if saved and backward_ran_since(flow, flow.saved_steps(binding, st.index), st.index):
            saved = []  # backward() already used (and freed) the graph that saved it
        if saved and later_backwards_skip(ctx.index, flow, binding, st.index):
            return None  # every later backward() is of a loss whose graph never reads this tensor
        when = ""
        if not saved and isinstance(target, cst.Name):
            found = _saved_on_a_skipping_path(flow, target.value, st.index)
            if found is not None:
                binding, saved, when = found
                root = binding.root()
        if not saved and binding.step < 0 and binding is root:
            found = _saved_at_a_call_site(ctx.index, flow, binding)
            if found is not None:
                saved, when = found
        aliases = flow.live_aliases(binding, st.index)
        if not saved and (isinstance(node, cst.Assign) or flow.holds(binding.grad) is not True):
            # no save: only an activation's live alias makes a hazard (a buffer, a batch or the
            # caller's tensor filled through a view is what the code means to do)
            return None
        if not saved and not aliases:
            return None
        if not saved and any(o.alias_how == "detach" for o in flow.bindings if o.shares_storage(binding)):
            return None  # a detach()ed alias: GF102 reports it with the right fix
        name = ctx.code(target)
        if saved and isinstance(node, cst.Assign):
            message = (f"item assignment to `{name}` writes in place into a tensor autograd saved for backward "
                       f"({saved[0]}){when}: backward() raises \"modified by an inplace operation\"")
        elif saved:
            message = (f"in-place `{op_text}` on `{name}`, which autograd saved for backward ({saved[0]}){when}: "
                       f"backward() raises \"modified by an inplace operation\"")
        else:
            message = f"in-place `{op_text}` on `{name}` also changes {_holders(aliases)}"
        if saved and aliases:
            message += f"; it also changes {_holders(aliases)}"
        unsafe = bool(aliases) or binding.is_param or root.is_param
        fix = _out_of_place_fix(ctx, st.node, node, target, Safety.UNSAFE if unsafe else Safety.SAFE)
        if not isinstance(target, cst.Name):
            message += "; a subscript target cannot be rewritten out of place (clone the tensor first)"
        return ctx.finding(st.node, message, fix)

    def _leaf_inplace(self, ctx, flow, st, node, binding, target):
        """`w -= lr * w.grad` (or `w.add_(1)`, `w[0] = 1.0`) with grad mode on, on a leaf that requires grad
        (analysis/leaves.py): autograd raises at the op itself, whatever was saved. The fix runs the update
        under `torch.no_grad()`, offered for a manual update (the statement reads `w.grad`)."""
        base = target.value if isinstance(target, cst.Subscript) else target
        if not (isinstance(base, cst.Name) and base.value == binding.name):
            return None
        if isinstance(node, cst.AugAssign):
            if type(node.operator) not in _AUG_OPS:
                return None
            op_text = _AUG_OPS[type(node.operator)][1]
        elif isinstance(node, cst.Call):
            if node.func.attr.value not in INPLACE_METHODS:
                return None
            op_text = f".{node.func.attr.value}()"
        else:
            op_text = "item assignment"
        how = leaf_at(flow, binding.name, st.index)
        if how is None:
            return None
        name = ctx.code(target)
        view = "view of a " if isinstance(target, cst.Subscript) else ""
        what = f"in-place `{op_text}` on `{name}`" if op_text != "item assignment" else f"item assignment to `{name}`"
        message = (f"{what} with grad mode on: `{binding.name}` is a leaf tensor that requires grad ({how}), "
                   f"so it raises \"a {view}leaf Variable that "
                   f"requires grad is being used in an in-place operation\"; ")
        fix = None
        line = st.line
        reads_grad = any(type(n) is cst.Attribute and n.attr.value == "grad" and isinstance(n.value, cst.Name) and
                         n.value.value == binding.name for n in walk(st.node))
        message += ("run the update under `with torch.no_grad():`" if reads_grad else
                    "write it under `with torch.no_grad():`, or before requires_grad is set")
        torch_name = torch_alias(flow)
        if reads_grad and torch_name is not None and isinstance(line, cst.SimpleStatementLine) and \
                len(line.body) == 1 and line.body[0] is st.node:
            block = cst.With(
                items=[cst.WithItem(item=cst.Call(func=cst.Attribute(value=cst.Name(torch_name),
                                                                     attr=cst.Name("no_grad"))))],
                body=cst.IndentedBlock(body=[line.with_changes(leading_lines=[])]),
                leading_lines=line.leading_lines,
            )
            fix = ctx.fix(f"run the update under `with {torch_name}.no_grad():`", [Edit(line, block)], Safety.SAFE,
                          {"kind": "equal"})
        return ctx.finding(st.node, message, fix)

    @staticmethod
    def _rewrite(stmt, node, target: cst.Name):
        if isinstance(node, cst.AugAssign):
            op_cls = _AUG_OPS[type(node.operator)][0]
            aug = node.operator
            operator = op_cls(whitespace_before=aug.whitespace_before, whitespace_after=aug.whitespace_after)
            value = cst.BinaryOperation(left=cst.Name(target.value), operator=operator, right=parenthesize(node.value))
            return cst.Assign(
                targets=[cst.AssignTarget(target=target, whitespace_before_equal=aug.whitespace_before,
                                          whitespace_after_equal=aug.whitespace_after)],
                value=value,
                semicolon=node.semicolon,
            )
        calls, _base = _inplace_chain(node)
        if any(INPLACE_METHODS.get(c.func.attr.value) is None for c in calls):
            return None
        call = _out_of_place(node)
        return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(target.value))], value=call, semicolon=stmt.semicolon)


def _multi_view_write(ctx, flow, st, node, target):
    """`means, log_stds = out.chunk(2, dim=-1)` then `log_stds.clamp_(-20, 2)` (or `+=`, or an item
    assignment) with grad mode on and `out` requiring grad: autograd raises at the in-place op itself, in
    the forward pass ("Output 1 of Split is a view and is being modified inplace ... returns multiple
    views"), whatever was saved. The name must be bound once in the scope, by unpacking a `chunk` /
    `split` / `unbind` call (or indexing one: `out.chunk(2)[1]`). Same fix as any in-place op: the
    out-of-place form writes nothing into the shared storage."""
    base = target.value if isinstance(target, cst.Subscript) else target
    if isinstance(node, cst.Call):
        base = _inplace_chain(node)[1]
    if not isinstance(base, cst.Name):
        return None
    b = flow.name_binding(base)
    if b is None or b.step < 0 or b.no_grad or flow.holds(b.grad) is not True:
        return None
    if sum(1 for o in flow.bindings if o.name == b.name) != 1:
        return None
    bound = flow.steps[b.step].node
    if not (isinstance(bound, cst.Assign) and len(bound.targets) == 1 and bound.value is b.value):
        return None
    unpacked = bound.targets[0].target
    call = b.value
    if isinstance(unpacked, (cst.Tuple, cst.List)):
        if not any(isinstance(e.value, cst.Name) and e.value.value == b.name for e in unpacked.elements):
            return None
    elif isinstance(unpacked, cst.Name) and isinstance(call, cst.Subscript) and len(call.slice) == 1 and \
            isinstance(call.slice[0].slice, cst.Index) and isinstance(call.slice[0].slice.value, cst.Integer):
        call = call.value
    else:
        return None
    if not isinstance(call, cst.Call):
        return None
    func_q = qualname(call.func, ctx.index.imports)
    if func_q in torchapi.MULTI_VIEW_FUNCS:
        if not call.args or call.args[0].keyword is not None or flow.requires_grad(call.args[0].value) is not True:
            return None
        how = f"`{func_q}()`"
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in torchapi.MULTI_VIEW_METHODS:
        # the receiver must be shown to require grad: `np.split(a, 2)` or a string's `.split()` never does
        if not flow.is_tensor(b) or flow.requires_grad(call.func.value) is not True:
            return None
        how = f"`.{call.func.attr.value}()`"
    else:
        return None
    name = ctx.code(target)
    if isinstance(node, cst.Assign):
        what = f"item assignment to `{name}`"
    elif isinstance(node, cst.AugAssign):
        if type(node.operator) not in _AUG_OPS:
            return None
        what = f"in-place `{_AUG_OPS[type(node.operator)][1]}` on `{name}`"
    else:
        if any(c.func.attr.value not in INPLACE_METHODS for c in _inplace_chain(node)[0]):
            return None
        what = f"in-place `.{node.func.attr.value}()` on `{name}`"
    message = (f"{what}: `{b.name}` is one of several views {how} returns of a tensor that requires grad, and "
               f"autograd refuses to modify such a view in place: the forward pass raises \"... is a view and "
               f"is being modified inplace ... returns multiple views\"; use the out-of-place form")
    fix = _out_of_place_fix(ctx, st.node, node, target, Safety.SAFE)
    if not isinstance(target, cst.Name):
        message += " (clone the view first: a subscript target cannot be rewritten out of place)"
    return ctx.finding(st.node, message, fix)


def _saved_list_element(ctx, flow, st, node, binding, target):
    """`laterals[i - 1] += up` on an element of a list of saved outputs (analysis/list_saves.py). Detect only."""
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and
            target.value.value == binding.name):
        return None
    if isinstance(node, cst.AugAssign):
        if type(node.operator) not in _AUG_OPS:
            return None
        op_text = _AUG_OPS[type(node.operator)][1]
        instead = f"{ctx.code(target)} = {ctx.code(target)} {op_text[:-1]} ..."
    elif isinstance(node, cst.Call) and node.func.value is target and node.func.attr.value in INPLACE_METHODS:
        op_text = f".{node.func.attr.value}()"
        instead = f"{ctx.code(target)} = {ctx.code(target)}.{node.func.attr.value[:-1]}(...)"
    else:
        return None
    made = saved_list_element_at(flow, binding, st.index)
    if made is None:
        return None
    return ctx.finding(st.node, (
        f"in-place `{op_text}` on `{ctx.code(target)}`, an element of `{binding.name}`, whose every element is the "
        f"output of `{made}(...)`, which autograd saved for backward (line {ctx.span(binding.value).line}): "
        f"backward() raises \"modified by an inplace operation\"; write it out of place (`{instead}`) (detect only)"),
        None)


def _out_of_place_fix(ctx, stmt, node, target, safety):
    """The out-of-place rewrite of an in-place op that is its whole statement on a plain name (`x += y` ->
    `x = x + y`, `x.relu_()` -> `x = x.relu()`), checked `equal` by the verifier; None otherwise."""
    whole_statement = stmt is node or (isinstance(stmt, cst.Expr) and stmt.value is node)
    if not (isinstance(target, cst.Name) and whole_statement):
        return None
    replacement = InplaceOnActivation._rewrite(stmt, node, target)
    if replacement is None:
        return None
    return ctx.fix(f"rewrite as `{ctx.module.code_for_node(replacement).strip()}`", [Edit(stmt, replacement)],
                   safety, {"kind": "equal"})


def _saved_at_a_call_site(index, flow, binding):
    """([why], where) when `binding` is a parameter of a function of the file and some call of it hands a name
    that autograd saved there, with grad on and no backward() in between (`y = net(x)`, `net` ending in
    `nn.Tanh()`, then `normalise(y)` whose body runs `images.div_(255)`): the write reaches the caller's saved
    tensor. A parameter rebound before the write is no longer the caller's tensor (its binding differs)."""
    fn = flow.function
    if fn is None or not isinstance(fn, cst.FunctionDef) or fn.name.value == "forward":
        return None
    for caller, cst_step, call, bound in index.callgraph.sites(fn):
        if cst_step.no_grad:
            continue
        arg = argument_for(fn, call, binding.name, bound)
        if not isinstance(arg, cst.Name):
            continue
        cb = caller.load_binding.get(id(arg))
        if cb is None or cb.no_grad:
            continue
        saved = caller.saved_before(cb, cst_step.index)
        if saved and not backward_ran_since(caller, caller.saved_steps(cb, cst_step.index), cst_step.index):
            line = index.position(call).start.line
            return [f"at the call `{code_of(call)}` on line {line}, `{arg.value}`: {saved[0]}"], ""
    return None


_META_READS = frozenset({"shape", "device", "dtype", "ndim", "size", "dim", "numel", "is_cuda"})


def _value_read_after(index, flow, binding, st):
    """The first later statement-level expression that reads the values of `binding` (the very binding the
    in-place call was handed, so `x = self.seq(x)` ends it), not only its shape or device; None if none."""
    for later in flow.steps[st.index + 1:]:
        if flow.exclusive(st.index, later.index):
            continue
        node = later.node
        if isinstance(node, cst.BaseCompoundStatement):
            continue  # a loop's or an if's header is read with its body's steps
        for n in walk(node):
            if not (isinstance(n, cst.Name) and n.value == binding.name and flow.load_binding.get(id(n)) is binding):
                continue
            parent = index.parents.get(n)
            if isinstance(parent, cst.Attribute) and parent.value is n and parent.attr.value in _META_READS:
                continue
            if isinstance(parent, cst.Arg):
                call = index.parents.get(parent)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in ("len", "id"):
                    continue
            return later.node
    return None


def _holders(aliases: list[str]) -> str:
    """What else sees the write, said truly: a name that shares the tensor's storage (a view, a detach, the
    same tensor under another name), and a container or attribute that holds this very tensor object (it
    shares nothing: it sees the change because it is the same tensor, and keeps the old one after a rewrite
    out of place)."""
    names = [a for a in dict.fromkeys(aliases) if a.startswith("`")]
    held = [a for a in dict.fromkeys(aliases) if not a.startswith("`")]
    parts = []
    if names:
        parts.append(f"{', '.join(names)}, which {'shares' if len(names) == 1 else 'share'} its storage")
    if held:
        parts.append(f"{', '.join(held)}, which {'holds' if len(held) == 1 else 'hold'} this very tensor")
    return "; and ".join(parts)


def _saved_on_a_skipping_path(flow, name: str, step: int):
    """(binding, why saved, when) for a binding of `name` that reaches `step` only when some `if` statements
    rebinding `name` do not run, and that autograd saved (`out = self.act(h)` with an in-place LeakyReLU, then
    `if self.use_dropout: out = self.drop(out)`, `out += x`). Each skipped test must be a configuration flag
    (`self.simplify`, a parameter, `self.proj is None`): a path that skips a test on data or on
    `self.training` is not shown to be taken in training. None when no such binding is shown."""
    for reach in reaching(flow, name, step):
        if not reach.skipped:
            continue
        tests = [t for chain in reversed(reach.skipped) for t in chain_tests(chain)]  # in source order
        if not all(_config_flag(flow, t) for t in tests):
            return None  # an earlier binding is reached only through this chain too
        b = reach.binding
        if b.no_grad or "." in b.name or not flow.is_tensor(b) or b.kind.value == "parameter" or \
                b.root().kind.value == "parameter":
            continue
        inside = steps_in(flow, reach.skipped)
        saves = [(i, why) for i, why in zip(flow.saved_steps(b, step), flow.saved_before(b, step)) if i not in inside]
        if not saves or backward_ran_since(flow, [i for i, _ in saves], step):
            continue
        skipped = " and ".join(f"`if {code_of(t)}:`" for t in tests)
        return b, [why for _, why in saves], f" when {skipped} {'does' if len(tests) == 1 else 'do'} not run"
    return None


def _config_flag(flow, test) -> bool:
    """`self.flag`, `not self.flag`, `self.proj is None`, a parameter `flag`: a setting fixed for the run, not
    a value of the data or the module's train/eval mode."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _config_flag(flow, test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)) and \
            isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        return _config_flag(flow, test.left)
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
        return test.attr.value != "training"
    if isinstance(test, cst.Name):
        b = flow.name_binding(test)
        return b is not None and b.is_param
    return False


def _inplace_chain(call: cst.Call) -> tuple[list[cst.Call], cst.BaseExpression]:
    """`x.add_(1).div_(2)` -> ([div_ call, add_ call], x): the in-place calls, outermost first,
    and what the innermost one is called on."""
    calls = []
    cur: cst.BaseExpression = call
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute) and cur.func.attr.value in INPLACE_METHODS:
        calls.append(cur)
        cur = cur.func.value
    return calls, cur


def _out_of_place(call: cst.BaseExpression) -> cst.BaseExpression:
    """The chain with every in-place method replaced by its out-of-place form."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in INPLACE_METHODS:
        return call.with_changes(func=call.func.with_changes(value=_out_of_place(call.func.value),
                                                             attr=cst.Name(INPLACE_METHODS[call.func.attr.value])))
    return call


RULE = InplaceOnActivation
