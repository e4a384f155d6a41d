"""GF304 unregistered-submodules: modules in a plain list/dict/tuple, or a requires_grad tensor, kept as attributes."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.callgraph import init_arguments
from gradfix.analysis.names import qualname
from gradfix.analysis.params import (
    FACTORIES, code_of, copy_chain, is_module_ctor_call as _ctor_call, is_optimizer_call, is_true, kwarg, nn_expr, swap, trains, without_arg,
)
from gradfix.analysis.registration import (
    REGISTERING_METHODS, lookup_table, registered_by_loop, registering_helpers, self_attr,
)
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs


class UnregisteredSubmodules(Rule):
    id = "GF304"
    name = "unregistered-submodules"
    summary = "Modules kept in a plain list/dict/tuple attribute, or a requires_grad tensor kept as an attribute"
    docs = RuleDocs(
        what=(
            "In `__init__` of an `nn.Module` class, finds `self.x = [...]` / `(...)` / `{...}` (displays and "
            "comprehensions) whose elements are all module constructors (or calls of a function of the file or project that "
            "returns one module class on every path, `conv_block(ch)` returning `nn.Sequential(...)`), `self.x = []` / `{}` (or `list()` / `dict()`) later filled with "
            "`self.x.append(Block())` / `self.x[k] = Block()`, with groups of modules "
            "(`self.x.append([nn.Linear(8, 8), nn.Tanh()])`), or with the modules the constructor is given "
            "(`for layer in layers: self.x.append(layer)`, where every construction of the class in the file passes "
            "a display of module constructors for `layers`), and `self.w = torch.randn(..., requires_grad=True)` "
            "(or `.requires_grad_()`, or such a tensor moved with `.to(device)`). Also trainable `nn.Parameter` "
            "values in a plain container: a list, tuple or dict display (string keys) or comprehension of them, or "
            "`self.w = {}` filled only by `self.w[\"name\"] = nn.Parameter(...)` / `self.w = []` filled only by "
            "`self.w.append(nn.Parameter(...))` (a Parameter is registered only as an attribute's own value; the "
            "answer is `nn.ParameterDict` / `nn.ParameterList`; detect only); left alone when the Parameters are "
            "made with `requires_grad=False`, registered another way (`register_parameter` in a loop over the "
            "container, `nn.ParameterList(self.w)`), given to an optimizer of the class's own, kept by a class that computes its "
            "gradients by hand (a `backward` method of its own filling `self.grads`), or written by another method of the "
            "class (`self.params[\"w\"].data = w` in a closed-form fit). Also (detect only), in a module class's `forward`, a torch "
            "module with trainable parameters (`Linear`, `Conv*`, `Embedding`, the RNNs, the norms, ...) built and "
            "called in one expression, `nn.Linear(d, h)(x)` (`.to(x.device)` between them included): nothing keeps "
            "it, so no parameter is registered and each call draws fresh weights; parameter-free modules "
            "(`nn.Upsample(...)(x)`), norms built with `affine=False` / `elementwise_affine=False`, and a module "
            "built in forward but assigned to an attribute (lazy construction, registered there) are left alone. "
            "Left alone: lists of ints, "
            "strings or configs, containers of parameter-free modules only (activations, pooling, dropout, padding, "
            "and module classes of the file that hold no parameter or buffer: bases `nn.Module`, no `nn.Parameter`, "
            "no registration, only parameter-free submodules, and every other attribute plain data used in "
            "arithmetic), a table of candidates whose pick is kept in another attribute (`self.backbone = "
            "self.choices[name]`, directly or returned by a method whose result is stored so: the pick is registered "
            "there, and registering the table would add the unused candidates and save the pick twice), "
            "`nn.ModuleList`/`nn.ModuleDict` already, and a list that is registered another way "
            "(`nn.Sequential(*self.blocks)`, `nn.ModuleList(self.blocks)`, `add_module`). In particular a list "
            "whose elements are registered one by one: a loop or comprehension over it that calls "
            "`self.add_module(...)`, `self.register_module(...)`, `setattr(self, ...)` (or a method of the class "
            "that does), and the loop that fills it and registers each element it appends (`layer = Block(); "
            "setattr(self, f\"fc{i}\", layer); self.layers.append(layer)`): the modules are registered already, and "
            "`nn.ModuleList` would save every weight under a second state_dict key. A tensor with requires_grad=True "
            "that the class gives to an optimizer of its own (`self.w = torch.ones(2, requires_grad=True); "
            "self.w_opt = torch.optim.SGD([self.w])`) is kept out of `parameters()` on purpose and left alone. A "
            "table of candidate backbones whose pick a helper returns into a local whose layers are registered "
            "through another attribute (`base = self._pick(arch); self.trunk = nn.Sequential(*list("
            "base.children())[:-1])`, the local read only through its attributes) is a factory table, not "
            "storage: `nn.ModuleDict` would add the unused candidates and change the state_dict keys."
        ),
        why=(
            "`nn.Module.__setattr__` registers only `nn.Module` and `nn.Parameter` values. Modules inside a plain "
            "container and tensors that merely require grad are invisible to `parameters()`, `state_dict()`, "
            "`.to(device)`, `.train()`/`.eval()` and DDP: the optimizer never updates them, a checkpoint does not "
            "save them, and `model.cuda()` leaves them on the CPU (then the forward raises a device mismatch). "
            "Silent until then (SimonThomine/RememberingNormality #7: plain tensors as memory, fixed in 1d99145)."
        ),
        example="self.layers = [nn.Linear(16, 16) for _ in range(3)]\nself.scale = torch.ones(16, requires_grad=True)",
        fixed_example="self.layers = nn.ModuleList([nn.Linear(16, 16) for _ in range(3)])\n"
                      "self.scale = nn.Parameter(torch.ones(16))",
        fix=(
            "Wraps the container: `nn.ModuleList(...)` for lists, tuples and list comprehensions, "
            "`nn.ModuleDict(...)` for dicts (string keys), `nn.ModuleList()` / `nn.ModuleDict()` for a container "
            "filled later; a tensor becomes `nn.Parameter(<tensor without requires_grad>)` (moves kept inside). "
            "Uses the file's spelling of `torch.nn`; no fix when neither `nn` nor `torch` is imported. No fix for a "
            "list filled with groups (`nn.ModuleList` accepts modules, not lists: wrap each group in `nn.Sequential`) "
            "or with the constructor's arguments (a caller in another file may pass plain callables, which "
            "`nn.ModuleList.append` rejects)."
        ),
        fix_safety=(
            "Unsafe by label: `parameters()`, the optimizer's view and `state_dict()` grow (old checkpoints lack the "
            "new keys; load them with `strict=False`), and `.to()` now moves the attribute. That is the point; "
            "the verifier decides."
        ),
        verification=(
            "`registers-params`: both versions are built (no-argument constructor or fixture) in float32; the "
            "rewrite's parameter names, submodules and state_dict keys must be a superset of the original's that "
            "now includes the attribute's entries, the attribute's values equal the original's, and forward "
            "outputs and the gradients of the common parameters agree, the new parameters receiving gradients "
            "(`fixes-hazard`: \"the parameters are now registered: 0 -> 6 parameters under layers\")."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): only the `__init__` of a module class is looked at, and what it
        reports is a `self.x = ` display or comprehension of modules, or a tensor made with `requires_grad=True`
        or `.requires_grad_()` (`_inspect`)."""
        if facts.forward_calls_a_call:
            # `nn.Linear(d, h)(x)` in forward (`_built_in_forward`: a call whose callee may build a torch module with
            # parameters), in any module class, with or without an `__init__` of its own
            return True
        if not (facts.init_class and (facts.attr_container or "requires_grad" in facts.idents
                                      or "requires_grad_" in facts.attrs)):
            return False
        # per class: `check` reads `self.<attr> = value` in the `__init__` of the module classes only (a
        # top-level class with a base), the value a container or (a tensor factory) a call
        container, call = facts.module_init_stores
        return container or (call and facts.requires_grad_request)

    def check(self, ctx):
        index = ctx.index
        for cname in sorted(index.module_classes):
            cls = index.classes[cname]
            forward = index.method(cls, "forward")
            if forward is not None and index.enclosing_class(forward) is cls:
                yield from self._built_in_forward(ctx, forward)
            init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
            if init is None:
                continue
            yield from self._init(ctx, cls, init)

    def _built_in_forward(self, ctx, forward: cst.FunctionDef):
        """`nn.Linear(d, h)(x)` in a module class's `forward`: a torch module with trainable parameters built and
        called in one expression (`.to(x.device)` between them included). Nothing keeps it, so the model
        registers no parameter for it and each call draws fresh random weights (pytorch/pytorch#1291).
        Detect only: the construction belongs in `__init__`."""
        index = ctx.index
        for node in walk(forward.body):
            if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Call):
                continue
            ctor = index.ctor_of(node.func)
            if ctor not in torchapi.PARAMETRIC_MODULES or _affine_off(node.func):
                continue
            short = ctor.rsplit(".", 1)[-1]
            yield ctx.finding(node.func, (
                f"`{code_of(node.func)}` builds an nn.{short} inside forward and calls it at once: nothing keeps it, "
                f"so its parameters are not registered (parameters() misses them, the optimizer never updates "
                f"them) and every call uses fresh random weights; build it in `__init__` as an attribute and call "
                f"that (detect only)"))

    # -- the constructor ---------------------------------------------------
    def _init(self, ctx, cls: cst.ClassDef, init: cst.FunctionDef):
        index = ctx.index
        flow = index.flow(init)
        assigns: dict[str, list] = {}          # attr -> assignment statements in order
        filled: dict[str, list] = {}           # attr -> module ctors appended / stored later
        no_fix: dict[str, str] = {}            # attr -> why nn.ModuleList() would not be right for every append
        registered: set[str] = set()
        param_fills: dict[str, list] = {}      # attr -> how nn.Parameter values are stored later ("key", "append", ...)
        for st in flow.steps:
            node = st.node
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                target = node.targets[0].target
                attr = self_attr(target)
                if attr is not None:
                    assigns.setdefault(attr, []).append(node)
                elif isinstance(target, cst.Subscript) and self_attr(target.value) is not None:
                    ctor = self._module_value(flow, node.value, index)
                    if ctor is not None:
                        filled.setdefault(self_attr(target.value), []).append(ctor)
                    elif _parameter_call(node.value, index.imports):
                        key = target.slice[0].slice if len(target.slice) == 1 else None
                        text_key = isinstance(key, cst.Index) and isinstance(key.value, (cst.SimpleString,
                                                                                         cst.FormattedString))
                        param_fills.setdefault(self_attr(target.value), []).append("key" if text_key else "other")
            if isinstance(node, cst.AugAssign) and self_attr(node.target) is not None:
                for ctor in self._elements(flow, node.value, index) or []:
                    filled.setdefault(self_attr(node.target), []).append(ctor)
        if not assigns:
            return
        helpers = registering_helpers(cls)
        # one pass over the class (exact type tests: isinstance against libcst's classes is slow)
        for node in walk(cls):
            kind = type(node)
            if kind in _LOOPS:
                # `for i, m in enumerate(self.x): self.add_module(str(i), m)` / `setattr(self, f"m{i}", m)`,
                # and the loop that fills the list and registers each element it appends
                # (`layer = Block(); setattr(self, f"fc{i}", layer); self.x.append(layer)`): the modules
                # are registered already, and `nn.ModuleList` would save each of them twice in state_dict
                registered |= registered_by_loop(node, helpers)
                if kind is cst.For:
                    continue
            if kind is not cst.Call:
                continue
            func = node.func
            # self.x.append(Block()) / self.x.extend([...])
            if type(func) is cst.Attribute and self_attr(func.value) is not None and \
                    func.attr.value in ("append", "extend", "insert") and node.args:
                attr = self_attr(func.value)
                value = node.args[-1].value
                ctors = [self._module_value(flow, value, index)] if func.attr.value != "extend" else \
                    (self._elements(flow, value, index) or [])
                if ctors == [None] and func.attr.value == "append" and _parameter_call(value, index.imports):
                    param_fills.setdefault(attr, []).append("append")
                    continue
                if ctors == [None]:
                    grouped = self._elements(flow, value, index)  # `self.x.append([nn.Linear(4, 4), nn.Tanh()])`
                    given = self._given_modules(cls, flow, value, index)
                    if grouped or given:
                        ctors = grouped or given
                        no_fix[attr] = "grouped" if grouped else "given"
                filled.setdefault(attr, []).extend(c for c in ctors if c is not None)
                continue
            # anything that registers `self.x` another way
            q = qualname(func, index.imports) or ""
            registering = (q.startswith("torch.nn.") and not q.startswith(("torch.nn.functional", "torch.nn.init"))) or (
                type(func) is cst.Attribute and func.attr.value in REGISTERING_METHODS) or q == "setattr"
            if registering:
                for arg in node.args:
                    for sub in walk(arg.value):
                        attr = self_attr(sub)
                        if attr is not None:
                            registered.add(attr)
            # state differentiated with torch.autograd.grad: a parameter would change its meaning
            if q in ("torch.autograd.grad", "torch.autograd.functional.jacobian"):
                registered |= {a for a in (self_attr(n) for n in walk(node)) if a}
        # state managed by hand: reassigned outside __init__ (reset each episode, meta-learning context
        # parameters)
        for stmt in cls.body.body:
            if type(stmt) is cst.FunctionDef and stmt is not init:
                for node in walk(stmt):
                    kind = type(node)
                    if kind is cst.Assign or kind is cst.AugAssign:
                        targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
                        # `self.w = ...`, also through items and attributes: `self.params["w"].data = w_star` (a
                        # closed-form fit writing the container's values itself)
                        registered |= {a for a in (_root_self_attr(t) for t in targets) if a}
        for attr, nodes in assigns.items():
            if attr in registered or len(nodes) != 1:
                continue  # registered elsewhere, or rebuilt (`self.x = nn.ModuleList(self.x)`)
            finding = self._inspect(ctx, cls, attr, nodes[0], filled.get(attr, []), no_fix.get(attr))
            if finding is None and attr not in filled and index.method(cls, "backward") is None:
                # (a class with a `backward` method of its own computes its gradients by hand: the container is
                # the parameter store its own update code reads, not one autograd and torch optimizers rely on)
                finding = self._parameters(ctx, cls, attr, nodes[0], param_fills.get(attr, []))
            if finding is not None and not lookup_table(index, cls, attr, nodes[0]):
                # (a table of candidates is left alone: the chosen one is registered where it is kept)
                yield finding

    def _module_value(self, flow, expr, index) -> str | None:
        ctor = is_module_ctor_call(expr, index)
        if ctor is not None:
            return ctor
        if isinstance(expr, cst.Name):
            for st in flow.steps:  # a module also kept as `self.attr` is registered there
                node = st.node
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and \
                        node.value.value == expr.value and any(self_attr(t.target) for t in node.targets):
                    return None
            for bd in reversed(flow.bindings):
                if bd.name == expr.value and isinstance(bd.value, cst.BaseExpression):
                    return is_module_ctor_call(bd.value, index)
        return None

    def _elements(self, flow, value, index) -> list[str] | None:
        """Constructors of every element of a container display/comprehension, or None if one is not a module."""
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            if not value.elements:
                return None
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
            return _all_module_ctors([el.value for el in value.elements], index)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            c = is_module_ctor_call(value.elt, index)
            return [c] if c is not None else None
        if isinstance(value, cst.Dict):
            if not value.elements:
                return None
            if not all(isinstance(el, cst.DictElement) and isinstance(el.key, (cst.SimpleString, cst.FormattedString))
                       for el in value.elements):
                return None
            return _all_module_ctors([el.value for el in value.elements], index)
        if isinstance(value, cst.DictComp):
            c = is_module_ctor_call(value.value, index)
            return [c] if c is not None else None
        return None

    def _given_modules(self, cls, flow, value, index) -> list[str] | None:
        """`for layer in layers: self.x.append(layer)` where `layers` is a parameter of `__init__`
        and every `Cls(...)` call of the file passes a display of module constructors for it: the
        constructors, else None."""
        if not isinstance(value, cst.Name):
            return None
        b = flow.name_binding(value)
        if b is None or b.step < 0 or not isinstance(flow.steps[b.step].node, cst.For) or \
                not isinstance(b.value, cst.Name):
            return None
        source = flow.name_binding(b.value)
        if source is None or not source.is_param:
            return None
        ctors: list[str] = []
        for _caller, arg in init_arguments(index, cls.name.value, b.value.value) or [(None, None)]:
            found = self._elements(None, arg, index) if arg is not None else None
            if not found:
                return None
            ctors += found
        return ctors

    def _inspect(self, ctx, cls, attr: str, node: cst.Assign, filled: list[str], no_fix: str | None = None):
        index = ctx.index
        value = node.value
        imports = index.imports
        target = f"self.{attr}"
        contract = {"kind": "registers-params", "class": cls.name.value, "attrs": [attr]}
        # modules in a container
        ctors = self._elements(None, value, index)
        shape = _empty_container(value, imports) or type(value)
        empty = shape is not type(value) or (isinstance(value, (cst.List, cst.Dict)) and not value.elements)
        if ctors is not None or (empty and filled):
            ctors = ctors if ctors is not None else filled
            if not any(trains(c, index) for c in ctors):
                return None  # parameter-free modules only (torch's, or a project class): nothing to train or save
            is_dict = shape in (cst.Dict, cst.DictComp)
            wrapper = "ModuleDict" if is_dict else "ModuleList"
            kind = {cst.List: "list", cst.Tuple: "tuple", cst.Dict: "dict", cst.ListComp: "list comprehension",
                    cst.DictComp: "dict comprehension", cst.GeneratorExp: "generator", cst.Set: "set"}[shape]
            how = f"of {_names(ctors)}" if not empty else {
                None: f"filled later with {_names(ctors)}",
                "grouped": f"filled later with lists of {_names(ctors)}",
                "given": f"filled later with the modules its constructor is given ({_names(ctors)} at its calls in "
                         f"this file)"}[no_fix]
            message = (f"`{target}` is a plain {kind} {how}: modules in a plain container are not registered, so "
                       f"their parameters are missing from parameters() and state_dict, the optimizer never updates "
                       f"them and `.to(device)` leaves them behind; use nn.{wrapper}")
            if isinstance(value, cst.Set):
                return ctx.finding(node.value, message)
            if empty and no_fix == "grouped":
                return ctx.finding(node.value, message + " (no fix: nn.ModuleList holds modules, not lists; wrap "
                                                         "each group in nn.Sequential or nn.ModuleList)")
            if empty and no_fix == "given":
                return ctx.finding(node.value, message + " (no fix: callers in other files may pass callables that "
                                                         "are not modules, which nn.ModuleList rejects)")
            func = nn_expr(imports, wrapper)
            if func is None:
                return ctx.finding(node.value, message + " (no fix: neither `torch.nn` nor `torch` is imported)")
            if empty:
                new = cst.Call(func=func)
            else:
                arg = value
                if isinstance(value, cst.Tuple) and not value.lpar:
                    arg = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                new = cst.Call(func=func, args=[cst.Arg(arg)])
            fix = ctx.fix(f"register them: `nn.{wrapper}(...)`", [Edit(value, new)], Safety.UNSAFE, contract)
            return ctx.finding(node.value, message, fix)
        # a tensor that requires grad
        tensor = self._grad_tensor(value, imports)
        if tensor is None or _own_optimizer(cls, target, imports):
            return None  # trained by an optimizer of its own (`self.opt = SGD([self.w])`): kept apart on purpose
        message = (f"`{target}` is a tensor with requires_grad=True kept as a plain attribute: not a parameter, so "
                   f"model.parameters() misses it and the optimizer never updates it; state_dict does not save it and "
                   f"`.to(device)` leaves it behind; use nn.Parameter")
        func = nn_expr(imports, "Parameter")
        if func is None:
            return ctx.finding(value, message + " (no fix: neither `torch.nn` nor `torch` is imported)")
        new = cst.Call(func=func, args=[cst.Arg(tensor)])
        fix = ctx.fix("make it a parameter: `nn.Parameter(...)`", [Edit(value, new)], Safety.UNSAFE, contract)
        return ctx.finding(value, message, fix)

    def _parameters(self, ctx, cls, attr: str, node: cst.Assign, fills: list[str]):
        """`nn.Parameter`s in a plain container: a display or comprehension of them, or an empty `[]` / `{}`
        filled only with them (`self.w = {}; self.w["w_i"] = nn.Parameter(...)`). `nn.Module.__setattr__`
        registers a Parameter only when it is the attribute's value itself, so these are missed by
        `parameters()` exactly like modules in a list (pytorch/pytorch#4631)."""
        index = ctx.index
        value = node.value
        target = f"self.{attr}"
        shape = _empty_container(value, index.imports) or type(value)
        is_dict = shape in (cst.Dict, cst.DictComp)
        if shape is not type(value) or (isinstance(value, (cst.List, cst.Dict)) and not value.elements):
            if not fills or (is_dict and any(f != "key" for f in fills)) or \
                    (not is_dict and any(f != "append" for f in fills)):
                return None
            how = "filled later with nn.Parameter values"
        else:
            elements = self._parameter_elements(value, index.imports)
            if not elements:
                return None
            how = "of nn.Parameter values"
        if _own_optimizer(cls, target, index.imports):
            return None  # handed to an optimizer of its own: kept out of parameters() on purpose
        wrapper = "ParameterDict" if is_dict else "ParameterList"
        kind = {cst.List: "list", cst.Tuple: "tuple", cst.Dict: "dict", cst.ListComp: "list comprehension",
                cst.DictComp: "dict comprehension"}.get(shape, "container")
        message = (f"`{target}` is a plain {kind} {how}: a Parameter is registered only when it is an attribute's "
                   f"own value, so these are missing from parameters() and state_dict, the optimizer never updates "
                   f"them and `.to(device)` leaves them behind; use nn.{wrapper}")
        return ctx.finding(value, message + " (detect only)")

    @staticmethod
    def _parameter_elements(value, imports) -> bool:
        if isinstance(value, (cst.List, cst.Tuple)):
            return bool(value.elements) and all(
                isinstance(el, cst.Element) and _parameter_call(el.value, imports) for el in value.elements)
        if isinstance(value, cst.ListComp):
            return _parameter_call(value.elt, imports)
        if isinstance(value, cst.Dict):
            return bool(value.elements) and all(
                isinstance(el, cst.DictElement) and isinstance(el.key, (cst.SimpleString, cst.FormattedString))
                and _parameter_call(el.value, imports) for el in value.elements)
        if isinstance(value, cst.DictComp):
            return _parameter_call(value.value, imports)
        return False

    def _grad_tensor(self, value, imports) -> cst.BaseExpression | None:
        """The tensor expression without its requires_grad request, when `value` is a factory that asks for it."""
        chain = copy_chain(value, imports)
        if chain is not None and chain.kind == "factory":
            base = chain.base
            if chain.requires_grad_arg is not None:
                return swap(chain.outer, {id(base): base.with_changes(args=without_arg(base.args, chain.requires_grad_arg))})
            return swap(chain.outer, {id(chain.requires_grad_call): base})
        if isinstance(value, cst.Call) and qualname(value.func, imports) in FACTORIES:
            rg = kwarg(value, "requires_grad")
            if rg is not None and is_true(rg.value) and not qualname(value.func, imports).endswith("_like"):
                return value.with_changes(args=without_arg(value.args, rg))
            return None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value == "requires_grad_" and isinstance(value.func.value, cst.Call) and \
                qualname(value.func.value.func, imports) in FACTORIES and \
                (not value.args or (len(value.args) == 1 and is_true(value.args[0].value))):
            return value.func.value
        return None


_LOOPS = frozenset({cst.For, cst.While, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})


def _root_self_attr(expr) -> str | None:
    """`w` of `self.w`, `self.w[k]`, `self.w["a"].data`: the attribute of `self` an assignment target writes into."""
    while type(expr) in (cst.Subscript, cst.Attribute) and self_attr(expr) is None:
        expr = expr.value
    return self_attr(expr)


def _empty_container(expr, imports):
    """`cst.Dict` / `cst.List` for the builtin calls `dict()` / `list()` (an empty container spelled as a call), else
    None."""
    if type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Name and expr.func.value in ("dict", "list") \
            and qualname(expr.func, imports) == expr.func.value:
        return cst.Dict if expr.func.value == "dict" else cst.List
    return None


def is_module_ctor_call(expr, index) -> str | None:
    """The module constructor `expr` calls (`nn.Linear(...)`, `Block(...).to(dev)`), or the one a factory function of
    the file or project returns on every path (`conv_pair(ch)` returning `nn.Sequential(...)`); else None."""
    ctor = _ctor_call(expr, index)
    if ctor is None and type(expr) is cst.Call:
        made = index.module_factory(qualname(expr.func, index.imports))
        ctors = {r.ctor for r in made} if made else set()
        if len(ctors) == 1:
            ctor = ctors.pop()
            return ctor if index.is_module_ctor(ctor) else None
    return ctor


def _affine_off(expr) -> bool:
    """`nn.LayerNorm(d, elementwise_affine=False)`, `nn.BatchNorm1d(n, affine=False)`: no trainable parameter."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Call):
        expr = expr.func.value  # `.to(device)` after the constructor
    return isinstance(expr, cst.Call) and any(
        a.keyword is not None and a.keyword.value in ("affine", "elementwise_affine") and
        isinstance(a.value, cst.Name) and a.value.value == "False" for a in expr.args)


def _parameter_call(expr, imports) -> bool:
    """`nn.Parameter(...)` that trains (not `requires_grad=False`)."""
    if not (isinstance(expr, cst.Call) and
            qualname(expr.func, imports) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")):
        return False
    rg = kwarg(expr, "requires_grad")
    if rg is None and len(expr.args) > 1 and expr.args[1].keyword is None:
        rg = expr.args[1]
    return rg is None or is_true(rg.value)


def _own_optimizer(cls: cst.ClassDef, target: str, imports) -> bool:
    """The class gives `target` (`self.w`) to a torch optimizer somewhere (`torch.optim.SGD([self.w])`)."""
    for node in walk(cls):
        if is_optimizer_call(node, imports):
            if any(code_of(n) == target for n in walk(node) if isinstance(n, cst.Attribute)):
                return True
    return False


def _names(ctors: list[str]) -> str:
    shown = list(dict.fromkeys(c.rsplit(".", 1)[-1] for c in ctors))
    return ", ".join(f"`{s}`" for s in shown[:3]) + (" ..." if len(shown) > 3 else "")


def _all_module_ctors(values, index) -> list[str] | None:
    """The module constructor of every value, or None when one is not a module."""
    ctors = []
    for v in values:
        c = is_module_ctor_call(v, index)
        if c is None:
            return None
        ctors.append(c)
    return ctors


RULE = UnregisteredSubmodules
