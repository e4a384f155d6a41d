"""GF210 frozen-or-missing-params: the optimizer never sees (some of) the trainable parameters, or a freeze
does not do what it says (a typo, a flag set on a module, a freeze after backward)."""

from __future__ import annotations

import os
import re

import libcst as cst

from gradfix.analysis.callgraph import elements_passed_for
from gradfix.analysis.flow import TENSORISH, Kind
from gradfix.analysis.expressions import _walk, code_of
from gradfix.analysis.iteration import iterations, locator
from gradfix.analysis.loopspec import skeleton
from gradfix.analysis.loopedits import optimizer_and_scheduler
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.params import freeze_target
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

TYPOS = {"require_grad": "requires_grad", "requires_grads": "requires_grad", "require_grads": "requires_grad",
         "requires_gradient": "requires_grad", "requires_grad_": "requires_grad", "required_grad": "requires_grad"}

PARAM_LAYERS = frozenset({
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "Embedding", "EmbeddingBag", "LSTM", "GRU", "RNN",
    "LSTMCell", "GRUCell", "RNNCell", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
    "PReLU", "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer", "Parameter", "RMSNorm",
})
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


class FrozenOrMissingParams(Rule):
    id = "GF210"
    name = "frozen-or-missing-params"
    summary = "The optimizer misses trainable parameters, or every parameter it holds is frozen"
    docs = RuleDocs(
        what=(
            "Finds six ways parameters train other than the code says: (1) the `require_grad` typo "
            "(`p.require_grad = False`, also `requires_grads`, `requires_grad_ = ...`) on a parameter; (2) an "
            "optimizer built from `model.parameters()` (or `model.encoder.parameters()`) after every parameter of "
            "`model` was frozen (`model.requires_grad_(False)`, `for p in model.parameters(): p.requires_grad = "
            "False`), or frozen right after it in the same block before the optimizer is used, and nothing "
            "unfreezes or replaces them (a layer assigned into the model after the freeze, `model.fc = ...` or "
            "`model.classifier[6] = nn.Linear(...)`, is new and trains; a freeze under a flag or in a loop the optimizer is outside of, or one after the "
            "optimizer was used, is a run-time choice and left alone; so is a model handed to a function or sent a "
            "method call between the freeze and the optimizer, which may add new trainable submodules such as LoRA "
            "adapters); (3) an optimizer built from a list of several submodules' parameters "
            "(`list(m.a.parameters()) + list(m.b.parameters())`, `itertools.chain(...)`, param-group dicts) of a "
            "model class defined in the file that leaves out a submodule with parameters that `forward` uses, is not "
            "frozen and is in no other optimizer; (4) a submodule replaced (`model.fc = nn.Linear(...)`) after the "
            "optimizer was built from `model.parameters()`, with no rebuilt optimizer or `add_param_group` afterwards; "
            "(5) `X.requires_grad = False` where `X` is shown to be an nn.Module (a name bound to a module, a "
            "submodule built in `__init__`, `self.model.head` through a model class of the file, a torchvision "
            "model's `fc`/`layer1`/`features`/..., the variable of a `for m in mods:` loop over a parameter when every "
            "call of the file passes a list or tuple display whose elements are all shown to be modules, "
            "`freeze([net.encoder])`): it sets a plain attribute and the parameters keep training (left "
            "alone: tensors and parameters, attributes of unknown kind, a loop over a list some call passes by name or with "
            "an element not shown to be a module, and classes of the file that keep their own "
            "`requires_grad` attribute); (6) a freeze (`m.requires_grad_(False)`, a `p.requires_grad = False` loop) "
            "inside the training loop between `backward()` and the step, of parameters the stepping optimizer "
            "holds (the model itself, a submodule, or a module passed to its constructor): the step right after "
            "still applies this batch's gradient, and with `zero_grad(set_to_none=False)` the kept zero `.grad` "
            "lets momentum and weight decay move them on every later step."
        ),
        why=(
            "Those parameters never change: with everything frozen, grad_norm is 0 (`clip_grad_norm_` sees no "
            "gradient); a layer missing from the optimizer keeps its initial weights (update 0.0, hazards.md's "
            "optimizer-stale-params); the typo sets an unused attribute, so the layer meant to be frozen keeps "
            "training. The second seed document's checklist asks for exactly these checks (requires_grad of every "
            "layer; the optimizer given all trainable parameters)."
        ),
        example="for p in model.backbone.parameters():\n    p.require_grad = False",
        fixed_example="for p in model.backbone.parameters():\n    p.requires_grad = False",
        fix="Fixes the typo (`require_grad` -> `requires_grad`); the other five are detect only.",
        fix_safety="Unsafe: the parameters become frozen (or trainable) as written, on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202) for the typo: the assignment is read from both versions and applied to the "
            "synthetic model's weight before training; `fixes-hazard` when the rewrite matches the canonical "
            "`requires_grad` write (a frozen weight gets no gradient and never changes) and the original does not; "
            "`equivalent` when the value is True (parameters train either way)."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a training step (the freeze between backward and step), an assignment
        to `x.requires_grad` or a misspelling of it, or an optimizer (`torch.optim.`, `apex.optimizers.`,
        `bitsandbytes.optim.`, `transformers.AdamW`: its qualified name has `optim` or `AdamW` in the text, or
        in the file's path when a relative import takes its package from there) built from a `m.parameters()` term:
        `_all_frozen`, `_missing` and `_stale` each need one (`_param_terms`), and the optimizer is a binding
        (`flow.bindings`, an assignment) of that call (`Facts.parameters_into`)."""
        return facts.backward_call or bool(facts.stored_attrs & ({"requires_grad"} | set(TYPOS))) or \
            ("parameters" in facts.called_attrs and  # every optimizer finding needs a term (`_parameters_of`)
             ("optim" in facts.text or "AdamW" in facts.text or
              (facts.relative_import and any(w in os.path.abspath(facts.path) for w in ("optim", "AdamW")))) and
             facts.parameters_into(("optim", "AdamW")))

    def check(self, ctx):
        yield from self._typos(ctx)
        yield from self._module_flags(ctx)
        yield from self._optimizers(ctx)
        yield from self._frozen_mid_step(ctx)

    # -- (5) `module.requires_grad = False` ----------------------------------
    def _module_flags(self, ctx):
        index = ctx.index
        for flow, small, tgt in _attribute_assignments(index, ("requires_grad",)):
            ctor = _module_ctor(index, flow, tgt.value)
            if ctor is None:
                continue
            short = ctor.rsplit(".", 1)[-1]
            message = (f"`{code_of(tgt.value)}` is a module ({short}): `{code_of(tgt)} = "
                       f"{code_of(small.value)}` only sets a Python attribute nobody reads, and its parameters "
                       f"keep their own `requires_grad`; use `{code_of(tgt.value)}.requires_grad_"
                       f"({code_of(small.value)})`")
            yield ctx.finding(tgt.attr, message, None)

    # -- (6) a freeze between backward() and the step ------------------------
    def _frozen_mid_step(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            tl = it.tl
            if tl.loop is None or tl.opt_step is None:
                continue
            opt = _stepped_name(it)
            owners = _optimizer_owners(it, opt) if opt else None
            if not owners:
                continue
            for st in tl.steps:
                if not (tl.backward.index < st.index < tl.opt_step.index) or id(st.node) in seen:
                    continue
                what = freeze_target(st.node)
                if what is None or not any(_holds(it, owner, what) for owner in owners):
                    continue
                seen.add(id(st.node))
                kept = [e for e in it.events if e.op == "zero_grad" and e.info.get("set_to_none") is False]
                later = (f"; and `{kept[0].recv}.zero_grad(set_to_none=False)` leaves them a zero `.grad`, so "
                         f"an optimizer with momentum or weight decay keeps moving them afterwards" if kept else "")
                node = _freeze_statement(st.node)
                message = (f"`{what}` is frozen after backward() and before `{opt}.step()`: the frozen parameters "
                           f"already hold this batch's gradient, so the step right after still updates them{later}; "
                           f"freeze them before the forward pass (or set their `.grad` to None)")
                yield ctx.finding(node, message, None)

    # -- (1) the typo -------------------------------------------------------
    def _typos(self, ctx):
        index = ctx.index
        for flow, small, tgt in _attribute_assignments(index, tuple(TYPOS)):
            if not _param_like(flow, tgt.value):
                continue
            right = TYPOS[tgt.attr.value]
            message = (f"`{code_of(tgt)}` sets an attribute nobody reads (the tensor flag is `{right}`): the "
                       f"parameter keeps training as before")
            new = small.with_changes(targets=[small.targets[0].with_changes(
                target=tgt.with_changes(attr=cst.Name(right)))])
            contract = {"kind": "train-loop",
                        "statement": {"line": ctx.span(small).line, "mode": "freeze"}}
            its = [it for it in iterations(index) if it.loop is not None and it.backward is not None]
            if its:
                contract.update(loop=locator(its[0]), skeleton=skeleton(its[0]), **optimizer_and_scheduler(its[0]))
            fix = ctx.fix(f"`{right}` instead of `{tgt.attr.value}`", [Edit(small, new)], Safety.UNSAFE, contract)
            yield ctx.finding(tgt.attr, message, fix)

    # -- (2)-(4) optimizers -------------------------------------------------
    def _optimizers(self, ctx):
        index = ctx.index
        all_opts = []  # (flow, binding)
        for scope in index.scopes():
            flow = index.flow(scope)
            for b in flow.bindings:
                if b.kind is Kind.OPTIMIZER and isinstance(b.value, cst.Call) and b.value.args:
                    all_opts.append((flow, b))
        file_text = index.text
        unfreezes = bool(re.search(r"requires_grad\s*=\s*True|requires_grad_\(\s*(True)?\s*\)", file_text))
        for flow, b in all_opts:
            params = b.value.args[0].value
            terms = _param_terms(index, params)
            if terms is None:
                continue
            if len(terms) == 1 and not unfreezes:
                found = self._all_frozen(ctx, flow, b, terms[0])
                if found is not None:
                    yield found
            if len(terms) >= 2:
                yield from self._missing(ctx, flow, b, terms, all_opts)
            if len(terms) == 1:
                found = self._stale(ctx, flow, b, terms[0])
                if found is not None:
                    yield found

    def _all_frozen(self, ctx, flow, b, term):
        freezes = []
        built = flow.steps[b.step] if 0 <= b.step < len(flow.steps) else None
        for st in flow.steps:
            if st.index >= b.step:
                break
            what = freeze_target(st.node)
            if what is not None and (term == what or term.startswith(what + ".")):
                # only a freeze that surely ran: not under a flag or in a loop the optimizer's line is outside of
                if built is not None and st.branch == built.branch[:len(st.branch)] and \
                        st.loops == built.loops[:len(st.loops)]:
                    freezes.append((st, what))
        after = False
        if not freezes:
            later = _frozen_before_use(flow, b, term)
            if later is None:
                return None
            freezes, after = [later], True
        # a submodule replaced after the freeze is trainable again
        for st in flow.steps:
            node = st.node
            if st.index > freezes[-1][0].index and isinstance(node, cst.Assign):
                for t in node.targets:
                    d = dotted(t.target) if isinstance(t.target, cst.Attribute) else None
                    if d and (d.startswith(term + ".") or term.startswith(d)):
                        return None
                    if isinstance(t.target, cst.Subscript):  # `model.classifier[6] = nn.Linear(...)`, `net[2] = ...`
                        base = t.target.value
                        while isinstance(base, cst.Subscript):
                            base = base.value
                        d = dotted(base)
                        if d and (d == term or d.startswith(term + ".") or term.startswith(d + ".")):
                            return None
        if not after and _handed_over(flow, term, freezes[-1][0].index, b.step):
            return None
        st, what = freezes[-1]
        line = ctx.span(st.line).line
        when = f"is frozen afterwards, before `{b.name}` is used" if after else "was frozen"
        message = (f"`{b.name}` is built from `{term}.parameters()`, but every one of them {when} (`{what}`"
                   f"{f' at line {line}' if line else ''}) and nothing unfreezes them: no parameter gets a gradient, "
                   f"so grad_norm is 0 and nothing trains")
        return ctx.finding(b.value, message, None)

    def _missing(self, ctx, flow, b, terms, all_opts):
        index = ctx.index
        roots = {t.split(".")[0] for t in terms}
        if len(roots) != 1 or any(t.count(".") != 1 for t in terms):
            return
        root = roots.pop()
        cls = _model_class(flow, index, root)
        if cls is None:
            return
        subs = index.submodules.get(cls, {})
        covered = {t.split(".")[1] for t in terms}
        forward_text = _forward_text(index, cls)
        file_text = index.text
        for attr, ctor in subs.items():
            if attr in covered or not _has_params(index, ctor, cls, attr):
                continue
            if not re.search(rf"self\.{re.escape(attr)}\b", forward_text):
                continue
            if re.search(rf"{re.escape(root)}\.{re.escape(attr)}\b[^\n]*requires_grad(_\(False\)|\s*=\s*False)", file_text) \
                    or re.search(rf"for\s+\w+\s+in\s+{re.escape(root)}\.{re.escape(attr)}\.parameters\(\)", file_text):
                continue
            others = [o for f, o in all_opts if o is not b and (f"{root}.{attr}" in code_of(o.value)
                                                               or f"{root}.parameters()" in code_of(o.value))]
            if others:
                continue
            short = ctor.rsplit(".", 1)[-1]
            message = (f"`{b.name}` is built from {', '.join(f'`{t}`' for t in terms)} but not `{root}.{attr}` "
                       f"({short}), which `{cls}.forward` uses: its parameters get gradients but are never updated")
            yield ctx.finding(b.value, message, None)

    def _stale(self, ctx, flow, b, term):
        if "." in term:
            return None
        for st in flow.steps:
            if st.index <= b.step or not isinstance(st.node, cst.Assign):
                continue
            for t in st.node.targets:
                tgt = t.target
                base = tgt.value if isinstance(tgt, cst.Subscript) else tgt
                d = dotted(base) if isinstance(base, cst.Attribute) else None
                if not d or not d.startswith(term + "."):
                    continue
                ctor = ctx.index.ctor_of(st.node.value)
                short = (ctor or "").rsplit(".", 1)[-1]
                if not (short in PARAM_LAYERS or short in CONTAINERS or ctor in ctx.index.module_classes):
                    continue
                later = [s for s in flow.steps if s.index > st.index]
                rebuilt = any(isinstance(s.node, cst.Assign) and any(
                    isinstance(x.target, cst.Name) and x.target.value == b.name for x in s.node.targets) for s in later)
                added = any(f"{b.name}.add_param_group" in code_of(s.node) for s in later
                            if not isinstance(s.node, cst.BaseCompoundStatement))
                used = any(f"{b.name}.step(" in code_of(s.node) or f"({b.name})" in code_of(s.node) for s in later
                           if not isinstance(s.node, cst.BaseCompoundStatement))
                if rebuilt or added or not used:
                    continue
                message = (f"`{code_of(tgt)}` is replaced after `{b.name}` was built from `{term}.parameters()`: the new "
                           f"{short}'s parameters are not in the optimizer and never update; build the optimizer after "
                           f"the replacement (or `add_param_group`)")
                return ctx.finding(st.node, message, None)
        return None


# Submodules every torchvision model that has them holds as modules (never tensors).
_TORCHVISION_SUBMODULES = frozenset({"fc", "conv1", "bn1", "layer1", "layer2", "layer3", "layer4", "features",
                                     "classifier", "avgpool"})


_TENSOR_CTORS = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})


def _module_ctor(index, flow, expr, depth: int = 0) -> str | None:
    """The module constructor of `expr` when it is shown to be an nn.Module (not a parameter or tensor):
    `net` bound to `nn.Linear(...)`, `self.head` built in `__init__`, `self.model.outc` through a model
    class of the file, `model.fc` of a torchvision model. None when not shown."""
    ctor = None
    if isinstance(expr, cst.Name):
        ctors = {b.ctor for b in flow.visible_bindings(expr.value) if b.kind is Kind.MODULE}
        ctor = ctors.pop() if len(ctors) == 1 else None
        passed = elements_passed_for(index, flow, expr) if ctor is None and not ctors and depth == 0 else None
        if passed:  # a loop variable over a list argument: every element every call passes is a module
            found = [_module_ctor(index, caller, el, depth + 1) for caller, el in passed]
            ctor = found[0] if all(found) else None
    elif isinstance(expr, cst.Attribute):
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = index.enclosing_class(flow.scope) if flow.function is not None else None
            if cls is not None and cls.name.value in index.module_classes:
                ctor = index.submodules.get(cls.name.value, {}).get(expr.attr.value)
            else:
                ctors = {b.ctor for b in flow.visible_bindings(f"self.{expr.attr.value}") if b.kind is Kind.MODULE}
                ctor = ctors.pop() if len(ctors) == 1 else None
        else:
            owner = _module_ctor(index, flow, expr.value, depth)
            if owner in index.module_classes:
                ctor = index.submodules.get(owner, {}).get(expr.attr.value)
            elif owner is not None and owner.startswith("torchvision.models.") and \
                    expr.attr.value in _TORCHVISION_SUBMODULES:
                ctor = f"{owner}.{expr.attr.value}"
    if ctor is None or not index.is_module_ctor(ctor) or ctor.rsplit(".", 1)[-1] in _TENSOR_CTORS:
        return None  # (`torch.nn.parameter.Parameter` reads like a module constructor to is_module_ctor)
    if ctor in index.classes and re.search(r"self\.requires_grad\b", code_of(index.classes[ctor])):
        return None  # a class of the file that keeps (and reads) its own `requires_grad` attribute
    return ctor


def _stepped_name(it) -> str | None:
    step = it.step_event()
    return step.recv if step is not None else None


def _optimizer_owners(it, opt: str) -> list[cst.CSTNode] | None:
    """The constructor call of the optimizer `opt` and, for each model whose `.parameters()` it takes, that
    model's own binding value (`nn.Sequential(embed, ...)`), to tell which modules it holds."""
    b = it.optimizer_binding(opt)
    if b is None:
        return None
    out = []
    for call in _walk(b.value):
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                call.func.attr.value in ("parameters", "named_parameters"):
            name = dotted(call.func.value)
            if name is None:
                return None
            out.append(name)
    return out or None


def _holds(it, owner: str, frozen: str) -> bool:
    """The optimizer built from `owner.parameters()` holds the parameters of `frozen`: the same module, a
    submodule (`model.embed`), or a module passed to `owner`'s constructor (`nn.Sequential(embed, ...)`)."""
    if frozen == owner or frozen.startswith(owner + ".") or owner.startswith(frozen + "."):
        return True
    for b in it.bindings(owner):
        if b.kind is Kind.MODULE and isinstance(b.value, cst.Call) and \
                any(isinstance(n, cst.Name) and n.value == frozen for n in _walk(b.value)):
            return True
    return False


def _freeze_statement(node):
    """The `p.requires_grad = False` inside a freeze loop (the call itself for `m.requires_grad_(False)`)."""
    if isinstance(node, cst.For):
        for n in _walk(node.body):
            if isinstance(n, cst.Assign) and code_of(n.targets[0].target).endswith(".requires_grad"):
                return n
    return node


_READS_ONLY = frozenset({"print", "len", "sum", "isinstance", "type", "str", "repr", "id", "hasattr", "getattr",
                         "parameters", "named_parameters", "state_dict", "numel", "to", "cuda", "cpu", "eval", "train",
                         "modules", "named_modules", "children", "named_children", "buffers", "count_parameters"})


def _handed_over(flow, term: str, start: int, end: int) -> bool:
    """Between the freeze (step `start`) and the optimizer (step `end`), the model is handed to a function
    (`replace_linear_with_lora(model, ...)`, `add_adapters(model)`) or sent a method call that may add new
    trainable submodules or unfreeze some (`model.add_module(...)`, `model.apply(unfreeze)`)."""
    root = term.split(".")[0]
    for st in flow.steps[start + 1:end]:
        if isinstance(st.node, cst.BaseCompoundStatement):
            continue
        for node in walk(st.node):
            if not isinstance(node, cst.Call):
                continue
            fname = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
                node.func.value if isinstance(node.func, cst.Name) else None
            if fname in _READS_ONLY:
                continue
            recv = dotted(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if recv is not None and (recv == root or recv.startswith(root + ".")):
                return True
            for a in node.args:
                d = dotted(a.value) if isinstance(a.value, (cst.Name, cst.Attribute)) else None
                if d is not None and (d == root or d.startswith(root + ".")):
                    return True
    return False


def _frozen_before_use(flow, b, term):
    """(step, what) for a freeze of `term` (or a module holding it) after the optimizer `b` was built from its
    parameters, in the same block (no loop or branch of its own), before any statement that reads `b`: the
    optimizer is left with nothing to train. A freeze after training started (a later epoch, after the loop) is
    a schedule, not this."""
    steps = flow.steps
    if not (0 <= b.step < len(steps)):
        return None
    built = steps[b.step]
    name_re = re.compile(rf"(?<![\w.]){re.escape(b.name)}\b")
    for st in steps[b.step + 1:]:
        what = freeze_target(st.node)
        if what is not None and (term == what or term.startswith(what + ".")):
            if st.loops == built.loops and st.branch == built.branch:
                return st, what
            return None
        if isinstance(st.node, cst.BaseCompoundStatement):
            continue  # a header: its body's statements come next
        if name_re.search(code_of(st.node)):
            return None  # the optimizer is used (stepped, handed over, returned) before any freeze
    return None


def _param_like(flow, recv) -> bool:
    if isinstance(recv, cst.Attribute) and recv.attr.value in ("weight", "bias"):
        return True
    if isinstance(recv, cst.Name):
        if recv.value == "self":
            return False
        for b in flow.bindings:
            if b.name != recv.value:
                continue
            if b.kind is Kind.PARAMETER or (b.kind in TENSORISH and flow.holds(b.grad) is True):
                return True  # a plain tensor (`pe = torch.zeros(...)`, a buffer) never trains: the typo is harmless
            if b.value is not None and re.search(r"param", code_of(b.value)):
                return True
    return False


def _param_terms(index, expr) -> list[str] | None:
    """['model.encoder', 'model.head'] for the usual ways to list several modules' parameters."""
    out: list[str] = []
    return out if _collect_terms(index, expr, out) else None


def _parameters_of(e, out: list[str]) -> bool:
    """`m.parameters()` / `list(m.parameters())`: appends `m`."""
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == "list" and len(e.args) == 1:
        e = e.args[0].value
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "parameters" \
            and not e.args:
        d = dotted(e.func.value)
        if d is None:
            return False
        out.append(d)
        return True
    return False


def _collect_terms(index, e, out: list[str]) -> bool:
    # a module-level function, not a closure calling itself: that closure was a reference
    # cycle holding the file's index until the cyclic collector ran
    if _parameters_of(e, out):
        return True
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
        return _collect_terms(index, e.left, out) and _collect_terms(index, e.right, out)
    if isinstance(e, cst.Call) and (qualname(e.func, index.imports) or "") in ("itertools.chain",):
        return all(_collect_terms(index, a.value, out) for a in e.args)
    if isinstance(e, cst.List):
        for el in e.elements:
            v = el.value
            if isinstance(el, cst.StarredElement):
                if not _collect_terms(index, v, out):
                    return False
            elif isinstance(v, cst.Dict):
                ps = [x.value for x in v.elements if isinstance(x, cst.DictElement)
                      and isinstance(x.key, cst.SimpleString) and x.key.evaluated_value == "params"]
                if len(ps) != 1 or not _collect_terms(index, ps[0], out):
                    return False
            else:
                return False
        return True
    return False


def _model_class(flow, index, name: str) -> str | None:
    ctors = {b.ctor for b in flow.bindings if b.name == name and b.kind is Kind.MODULE}
    if not ctors and flow.function is not None:
        ctors = {b.ctor for b in index.flow(index.module).bindings if b.name == name and b.kind is Kind.MODULE}
    if len(ctors) != 1:
        return None
    ctor = ctors.pop()
    return ctor if ctor in index.module_classes else None


def _forward_text(index, cls: str) -> str:
    fwd = index.method(cls, "forward")
    return code_of(fwd) if fwd is not None else ""


def _has_params(index, ctor: str, cls: str, attr: str) -> bool:
    short = ctor.rsplit(".", 1)[-1]
    if ctor.startswith("torch.nn.") and short in PARAM_LAYERS:
        if short.startswith("Parameter"):
            return True
        return True
    if ctor in index.module_classes:
        return any(_has_params(index, c, ctor, a) for a, c in index.submodules.get(ctor, {}).items())
    if ctor.startswith("torch.nn.") and short in CONTAINERS:
        # Sequential(nn.Linear(...), nn.ReLU()): look at the constructor call's arguments
        node = index.classes.get(cls)
        if node is None:
            return False
        for n in _walk(node):
            if isinstance(n, cst.Assign) and any(code_of(t.target) == f"self.{attr}" for t in n.targets):
                for m in _walk(n.value):
                    if isinstance(m, cst.Call):
                        q = qualname(m.func, index.imports) or ""
                        if q.rsplit(".", 1)[-1] in PARAM_LAYERS or q in index.module_classes:
                            return True
        return False
    return False


def _attribute_assignments(index, attrs: tuple[str, ...]):
    """(flow, statement, target) for each `x.<attr> = value` of the file, attr one of `attrs`."""
    for scope in index.scopes():
        flow = index.flow(scope)
        for st in flow.steps:
            small = st.node
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            tgt = small.targets[0].target
            if isinstance(tgt, cst.Attribute) and tgt.attr.value in attrs:
                yield flow, small, tgt


RULE = FrozenOrMissingParams
