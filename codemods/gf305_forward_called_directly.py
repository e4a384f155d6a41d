"""GF305 forward-called-directly: `model.forward(x)` skips the module's hooks."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.callgraph import argument_for, constructor_arguments, passed_arguments
from gradfix.analysis.flow import Kind
from gradfix.analysis.names import dotted, qualname, shorten
from gradfix.analysis.params import all_calls, code_of, is_module_ctor_call, root_name
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_EXPORT_PREFIXES = ("torch.jit.", "torch.onnx.", "torch.export.", "torch.compile", "torch._dynamo.")
_HOOK_WORDS = ("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
               "register_backward_hook", "weight_norm", "spectral_norm", "prune.")


# Wrappers whose own forward() does their work (scatter, gradient-sync set-up): calling it directly is fine.
_FORWARD_WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
})

class ForwardCalledDirectly(Rule):
    id = "GF305"
    name = "forward-called-directly"
    summary = "`model.forward(x)` called from outside the module skips its hooks"
    docs = RuleDocs(
        what=(
            "Finds `m.forward(...)` where `m` is shown to be an `nn.Module`: a name bound in the file only to an "
            "`nn.Module` constructor or a model class of the project (of the file, or imported from another "
            "checked file that shows it subclasses `nn.Module`; also wrapped: `weight_norm(nn.Linear(...))`, "
            "`spectral_norm(...)`, pruning), what a function of the project returns when every path of it returns "
            "a module (`model = build_model()`, with `build_model` in this file or another checked file; a path "
            "that may return something else or fall off the end leaves it unknown), a parameter annotated as "
            "`nn.Module` (or a module class), an attribute "
            "`self.encoder` that its class assigns only from such constructors (a submodule of a module class, or "
            "the network a plain trainer / agent object holds: `self.net = Net()`, `self.net.forward(s)`; also "
            "element by element, `self.online, self.target = Net(), Net()`), "
            "the target of a `for` over an `nn.ModuleList` or `nn.Sequential` its class builds (also sliced or "
            "`reversed(...)`, or through a name bound only to such, `layers = layers[::-1]`) or over an "
            "`nn.ModuleDict`'s `.values()`: those containers hold only modules (iterating a ModuleDict itself gives "
            "its keys, and a plain list may hold anything: left alone), "
            "`agent.net.forward(s)` for `agent = Agent()` of the file, and, from the call sites in the file, a "
            "parameter without annotation that every call of its function passes a module for (`def train(model, "
            "...)` called as `train(net, ...)` with `net = Net()`) and a plain object's `self._model` that its "
            "`__init__` stores from a parameter every construction of the class passes a module for "
            "(`Trainer(model, opt)`), and `parser.model.forward(x)` on an object passed in as a parameter when every "
            "call of the function in the file passes one whose `model` the caller (or its caller, in turn) set to a "
            "module before the call (`parser.model = ParserModel(...)`; set after the call, or to anything else, "
            "it stays unknown). "
            "Left alone, because `obj(x)` could raise TypeError there: a receiver whose class is unknown (a "
            "parameter without annotation that no call in the file shows to be a module, however it is named; an "
            "object built by a class or function of another file that is not checked with this one, or whose "
            "module-ness the project index cannot show), an instance of a plain class, a TorchScript "
            "object (`torch.jit.load(...)`, `torch.jit.script` "
            "of a function), and an attribute also assigned from anything else. "
            "Never fires on `super().forward(...)`, `self.forward(...)` inside the module's own methods, "
            "`Base.forward(self, x)`, a module class's `self.module` given by the caller (a wrapper) unless every "
            "`Wrapper(...)` of the file passes a module and the class registers no hook itself (a wrapper that "
            "reruns the wrapped forward from a hook of its own, where calling the module would run that hook "
            "again, does it on purpose; a wrapper the file never builds wraps what its callers pass), or code that "
            "scripts, traces, exports or compiles (`torch.jit`, `torch.onnx.export`, `torch.export`, "
            "`torch.compile`) in the same function or on the same name."
        ),
        why=(
            "`Module.__call__` runs the forward pre-hooks and hooks, then `forward`; calling `forward` directly "
            "skips them. Hook-based features then silently stop working: hook-based `weight_norm` and "
            "`spectral_norm` use a stale weight (with `weight_norm` the second iteration raises \"backward "
            "through the graph a second time\"), pruning masks are not applied, and wrappers that rely on hooks "
            "(FSDP2's `fully_shard`, activation checkpointing, profilers) are bypassed. DDP, DataParallel and FSDP1 "
            "wrappers do their work in `forward()` itself and are left alone, as are instances of plain classes "
            "of the file. dslinter W5516 `forward-pytorch`."
        ),
        example="out = model.forward(x)\nloss = crit(out, y)",
        fixed_example="out = model(x)\nloss = crit(out, y)",
        fix=(
            "Calls the module: `model(x)` (arguments kept). Offered only where the receiver is shown to be a "
            "module (see above): on an object of unknown class the call form is no fix."
        ),
        fix_safety=(
            "Safe when the file registers no hook on that module (then `model(x)` computes exactly "
            "`model.forward(x)`); unsafe when it does (the hooks now run, which is the point), and unsafe when the "
            "receiver is known to be a module only from the calls in this file (a parameter, or an attribute stored "
            "from a constructor argument): a caller in another file may pass a plain object, which `obj(x)` would "
            "reject with TypeError. The verifier decides."
        ),
        verification=(
            "`forward-call`: inside an `nn.Module` class the module check (`equal`) on the class. Elsewhere the "
            "module is built from the statement that binds it (`model = Net()`, plus hook registrations on it in "
            "the same scope), an input is inferred from its first layer, and `m(x)` is compared with `m.forward(x)` "
            "(outputs, parameter and input gradients), then a test forward hook shows that only the call runs "
            "hooks: `equivalent` with no hooks registered, `changes-behaviour` (applied only with `--unsafe-fixes`) when registered hooks change the "
            "result. A plain object's module attribute is built alone from its assignment (`net = Net()`). A "
            "parameter that the file's only call passes a module for is built from the caller's binding when the "
            "caller uses the same name (`model = Net(); fit(model, ...)`). Any other module built from function "
            "arguments is `untestable` (a fixture helps)."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a `x.forward(...)` call on a dotted name other than `self`, `cls` or
        an explicit parent call (`super().forward(x)`, `Base.forward(self, x)`)."""
        return facts.forward_called_on_another

    def check(self, ctx):
        index = ctx.index
        for node in all_calls(index):
            if not isinstance(node.func, cst.Attribute) or node.func.attr.value != "forward":
                continue
            finding = self._inspect(ctx, node)
            if finding is not None:
                yield finding

    def _inspect(self, ctx, call: cst.Call):
        index = ctx.index
        recv = call.func.value  # type: ignore[union-attr]
        if isinstance(recv, cst.Name) and recv.value in ("self", "cls"):
            return None
        if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name) and recv.func.value == "super":
            return None
        if call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self":
            return None  # `Base.forward(self, x)`: an explicit parent call
        name = dotted(recv)
        if name is None:
            return None
        q = qualname(recv, index.imports) or ""
        if name in index.classes or index.is_module_ctor(q) or q.startswith("torch."):
            return None
        fn = index.enclosing(call, (cst.FunctionDef,))
        if self._export_code(ctx, fn, recv):
            return None
        scope = fn if fn is not None else ctx.module
        flow = index.flow(scope)
        setup, how = self._receiver(ctx, call, recv, flow)
        if how is None:
            return None
        cls = index.enclosing_class(call)
        in_module = cls is not None and cls.name.value in index.module_classes and fn is not None
        # an element's hooks may be registered under another name (`for blk in self.blocks:
        # blk.register_forward_hook(...)`): any hook registration in the file counts
        hooked = self._hooked(ctx, recv, anywhere=how == "element")
        message = (f"`{shorten(code_of(call))}` calls forward() directly: the hooks of `{name}` are skipped "
                   f"(hook-based weight_norm/spectral_norm, pruning, FSDP2); call the module: `{name}(...)`")
        new_call = call.with_changes(func=recv)
        # a plain object's module is built alone from its assignment (`net = Net()`)
        held = how in ("attribute", "constructor argument")
        built = recv.attr.value if held and setup else name  # type: ignore[union-attr]
        contract = {"kind": "forward-call", "receiver": built, "in_class": bool(in_module),
                    "call_old": code_of(call), "call_new": code_of(new_call)}
        if setup:
            contract["setup"] = setup
        # known a module only from this file's calls: a caller in another file may pass a plain object
        from_callers = how in ("argument", "constructor argument")
        fix = ctx.fix(f"call the module: `{shorten(code_of(new_call))}`", [Edit(call, new_call)],
                      Safety.UNSAFE if hooked or from_callers else Safety.SAFE, contract)
        return ctx.finding(call, message, fix)

    # -- what the receiver is ----------------------------------------------
    def _receiver(self, ctx, call, recv, flow) -> tuple[str | None, str | None]:
        """(setup statement(s) that build it, how it is known to be a module) or (None, None).
        Only a receiver shown to be an nn.Module counts: a name bound only to module constructors
        (or a parameter annotated as one), or an attribute its class assigns only from them.
        Anything else (a parameter without annotation, an object of a class from another file that
        the project index cannot show is a module, a TorchScript object) is unknown, and `obj(x)` could raise TypeError there: no finding."""
        index = ctx.index
        if isinstance(recv, cst.Attribute):
            attr = recv.attr.value
            owner = recv.value
            if isinstance(owner, cst.Name) and owner.value == "self":
                cls = index.enclosing_class(call)
                if cls is None:
                    return None, None
                value = attribute_modules(index, cls).get(attr)
                if value is None and cls.name.value not in index.module_classes:
                    # `self._model = model` in `__init__`, and every `Trainer(net, ...)` of the file passes a module
                    setup, how = self._all_modules(ctx, constructor_arguments(index, cls.name.value, attr), attr, 0)
                    return (None if self._hooked(ctx, recv) else setup), (how and "constructor argument")
                if value is None:
                    return self._wrapped(ctx, cls, attr)
                if cls.name.value in index.module_classes:
                    return None, "submodule"
                # a module held by a plain object (a trainer, an agent): built the same way here
                if isinstance(value, cst.BaseExpression) and not self._hooked(ctx, recv):
                    return f"{attr} = {code_of(value)}", "attribute"
                return None, "attribute"
            if isinstance(owner, cst.Name):
                # `agent.net.forward(s)` with `agent = Agent()` of this file
                cls_name = self._instance_of(ctx, owner.value, flow)
                if cls_name is not None and attr in attribute_modules(index, index.classes[cls_name]):
                    return None, "attribute"
                if cls_name is None and self._held_by_argument(ctx, owner.value, attr, flow, 0):
                    return None, "argument"
            return None, None
        if not isinstance(recv, cst.Name):
            return None, None
        return self._name_module(ctx, recv.value, flow)

    def _wrapped(self, ctx, cls, attr: str) -> tuple[str | None, str | None]:
        """A module class's `self.layer` stored from an `__init__` parameter (a wrapper): a module when every
        `Cls(...)` of the file passes one, unless the class registers a hook itself (a wrapper that reruns the
        wrapped forward from its own hook, where calling the module would run that hook again, means it)."""
        for node in walk(cls):
            if isinstance(node, cst.Call) and any(w in code_of(node.func) for w in _HOOK_WORDS):
                return None, None
        _setup, how = self._all_modules(ctx, constructor_arguments(ctx.index, cls.name.value, attr), attr, 0)
        return None, (how and "constructor argument")

    def _held_by_argument(self, ctx, owner: str, attr: str, flow, depth: int) -> bool:
        """`parser.model.forward(x)` in `def train_for_epoch(parser, ...)`: the object is a parameter, and every
        call of the function in the file passes one whose `.model` the caller (or its caller, in turn) set to a
        module before the call (`parser.model = ParserModel(...)`). The object's own class is not read: only
        those assignments, all of them modules, say what the attribute holds."""
        held = f"{owner}.{attr}"
        if flow.visible_bindings(held):
            return self._name_module(ctx, held, flow, depth + 1)[1] is not None
        bs = flow.visible_bindings(owner)
        fn = flow.function
        if depth > 3 or fn is None or len(bs) != 1 or not bs[0].is_param:
            return False
        sites = ctx.index.callgraph.sites(fn)
        if not sites:
            return False
        for caller, st, call, bound in sites:
            arg = argument_for(fn, call, owner, bound)
            if not isinstance(arg, cst.Name):
                return False
            if any(b.step >= st.index for b in caller.bindings if b.name == f"{arg.value}.{attr}"):
                return False  # set (again) only after the call
            if not self._held_by_argument(ctx, arg.value, attr, caller, depth + 1):
                return False
        return True

    def _name_module(self, ctx, name: str, flow, depth: int = 0) -> tuple[str | None, str | None]:
        """(setup, how) when every binding of `name` that `flow` sees is an nn.Module: a constructor,
        or a parameter without annotation that every call of the function in the file passes a
        module for (`def train(model, ...)` called as `train(net, ...)` with `net = Net()`)."""
        index = ctx.index
        bindings = self._bindings(ctx, name, flow)
        for b in bindings:
            if isinstance(b.value, cst.Call):
                q = qualname(b.value.func, index.imports) or ""
                if q.startswith(_EXPORT_PREFIXES):
                    return None, None  # scripted / traced / compiled / loaded TorchScript: not a plain module
                if q in _FORWARD_WRAPPERS:
                    return None, None  # DDP / DataParallel do their work in forward() itself
                if q in index.classes and q not in index.module_classes:
                    return None, None  # an instance of a plain class of this file (a numpy model, a tokenizer)
        relevant = [b for b in bindings if not _is_none(b.value)]
        if relevant and all(self._loop_element(ctx, name, b, flow, depth) for b in relevant):
            return None, "element"     # `for flow in self.flows:`, an nn.ModuleList: its elements are modules
        if len(relevant) == 1 and relevant[0].is_param and relevant[0].kind is Kind.UNKNOWN and \
                relevant[0].ctor is None and flow.function is not None:
            return self._passed_module(ctx, name, flow, depth)
        if not relevant or any(b.kind is not Kind.MODULE or (b.ctor or "").endswith("Loss") for b in relevant):
            return None, None  # unknown, or bound to something else too
        b = relevant[-1]
        setup = None
        if isinstance(b.value, cst.BaseExpression) and b.step >= 0:
            flow = next((f for f in flow.and_module() if any(x is b for x in f.bindings)), flow)
            lines = [f"{name} = {code_of(b.value)}"]
            for st in flow.steps[b.step + 1:]:
                node = st.node
                if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
                    text = code_of(node.value)
                    root = root_name(node.value.func) if isinstance(node.value.func, cst.Attribute) else None
                    if root is not None and root.value == name and "register_" in text and "hook" in text:
                        lines.append(text)
            setup = "\n".join(lines)
        return setup, "binding"

    def _loop_element(self, ctx, name: str, b, flow, depth: int) -> bool:
        """`b` binds `name` as the target of a `for` over a container whose elements are modules."""
        node = _step_node(flow, b)
        return isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == name and \
            self._module_container(ctx, node.iter, flow, node, depth)

    def _module_container(self, ctx, expr, flow, at, depth: int, wanted=None) -> bool:
        """An `nn.ModuleList` or `nn.Sequential` (which take and hold only modules: `append` and the constructor
        raise TypeError on anything else), an `nn.ModuleDict`'s `.values()`, a slice or `reversed(...)` of one,
        `self.x` built as one, or a name every binding of which is one. Iterating an `nn.ModuleDict` itself gives
        its keys."""
        index = ctx.index
        if depth > 3:
            return False
        inner = _reordered(index, expr)
        if inner is not None:
            return self._module_container(ctx, inner, flow, at, depth + 1, wanted)
        if wanted is None and isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value == "values" and not expr.args:
            return self._module_container(ctx, expr.func.value, flow, at, depth + 1, _MODULE_DICTS)
        wanted = wanted or _MODULE_SEQUENCES
        if isinstance(expr, cst.Call):
            return (qualname(expr.func, index.imports) or "") in wanted
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = index.enclosing_class(at)
            value = attribute_modules(index, cls).get(expr.attr.value) if cls is not None else None
            return isinstance(value, cst.Call) and self._module_container(ctx, value, flow, at, depth + 1, wanted)
        if isinstance(expr, cst.Name):
            # `layers = layers[::-1]` keeps what `layers` was: decided by the other bindings
            bindings = [b for b in flow.visible_bindings(expr.value) if not _is_none(b.value) and
                        not _same_name(_reordered(index, b.value), expr.value)]
            return bool(bindings) and all(
                isinstance(b.value, cst.BaseExpression) and _step_node(flow, b) is not None and
                not isinstance(_step_node(flow, b), cst.For) and
                self._module_container(ctx, b.value, flow, at, depth + 1, wanted) for b in bindings)
        return False

    def _passed_module(self, ctx, name: str, flow, depth: int) -> tuple[str | None, str | None]:
        """A parameter is a module when every call of its function in the file passes one."""
        args = passed_arguments(ctx.index, flow.function, name) if depth < 3 else None
        return self._all_modules(ctx, args, name, depth)

    def _all_modules(self, ctx, args, name: str, depth: int) -> tuple[str | None, str | None]:
        """(setup, "argument") when each (caller flow, argument) is shown to be a module; the setup
        when every call passes the same build: the caller's own binding of the argument (then
        `net = model` when the parameter is named otherwise, `compute_accuracy(model, loader)`)."""
        if not args:
            return None, None
        setups = []
        for caller, arg in args:
            if isinstance(arg, cst.Name):
                setup, how = self._name_module(ctx, arg.value, caller, depth + 1)
                if how is None:
                    return None, None
                if setup is not None and arg.value != name:
                    one = setup.split(" = ", 1)
                    if "\n" not in setup and one[0] == arg.value and not re.search(
                            rf"\b{re.escape(arg.value)}\b", one[1]):
                        # `net_clone = Net()` passed as `net`: the same build (not `model = model.to(DEVICE)`,
                        # which reads the name it binds)
                        setup = f"{name} = {one[1]}"
                    else:
                        setup = f"{setup}\n{name} = {arg.value}"
                setups.append(setup)
            elif self._module_ctor(ctx, arg):
                setups.append(f"{name} = {code_of(arg)}")
            else:
                return None, None
        return (setups[0] if len(set(setups)) == 1 else None), "argument"

    def _module_ctor(self, ctx, expr) -> bool:
        q = is_module_ctor_call(expr, ctx.index)
        return q is not None and q not in _FORWARD_WRAPPERS and not (q or "").endswith("Loss")

    def _bindings(self, ctx, name: str, flow):
        return flow.visible_bindings(name)

    def _instance_of(self, ctx, name: str, flow) -> str | None:
        """The class of this file that every binding of `name` constructs, if there is one."""
        found = set()
        for b in self._bindings(ctx, name, flow):
            value = b.value
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                    and value.func.value in ctx.index.classes):
                return None
            found.add(value.func.value)
        return found.pop() if len(found) == 1 else None

    def _export_code(self, ctx, fn, recv) -> bool:
        index = ctx.index
        scope = fn if fn is not None else ctx.module
        if fn is not None:
            for dec in fn.decorators:
                expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
                if (qualname(expr, index.imports) or "").startswith(_EXPORT_PREFIXES):
                    return True
        for node in walk(scope):
            if isinstance(node, cst.Call) and (qualname(node.func, index.imports) or "").startswith(_EXPORT_PREFIXES):
                return True
        return False

    def _hooked(self, ctx, recv, anywhere: bool = False) -> bool:
        """Whether the file registers hooks (or hook-based reparametrisations) anywhere near this module; with
        `anywhere`, at all (a loop element's hooks may be registered under another name)."""
        root = None if anywhere else root_name(recv)
        for node in walk(ctx.module):
            if isinstance(node, cst.Call):
                text = code_of(node.func)
                if any(w in text for w in _HOOK_WORDS):
                    if root is None or root.value in ("self",) or root.value in code_of(node):
                        return True
        return False


_MODULE_SEQUENCES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})
_MODULE_DICTS = frozenset({"torch.nn.ModuleDict"})


def _step_node(flow, b):
    """The statement of `b`'s step, in the flow (the scope's own, or the module's) that made the binding."""
    owner = next((f for f in flow.and_module() if any(x is b for x in f.bindings)), None)
    return owner.steps[b.step].node if owner is not None and 0 <= b.step < len(owner.steps) else None


def _reordered(index, expr):
    """`x[::-1]`, `x[1:]`, `reversed(x)`: the `x` whose elements they hold, else None."""
    if isinstance(expr, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in expr.slice):
        return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "reversed" and \
            "reversed" not in index.functions and len(expr.args) == 1:
        return expr.args[0].value
    return None


def _same_name(expr, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _is_none(value) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


def attribute_modules(index, cls: cst.ClassDef) -> dict[str, cst.CSTNode]:
    """attr -> the value of `self.attr = ...` for the attributes a class assigns (in any of its
    methods) only from nn.Module constructors (`nn.Linear(...)`, a module class of the file,
    `Net().to(dev)`, `weight_norm(...)`); in a plain class (a trainer, an agent) also from a
    parameter annotated as an nn.Module. `None` placeholders are ignored. A candidate for the
    shared analysis: `submodules` keeps any call's qualname and reads only `__init__` of module
    classes."""
    key = f"gf305.attribute_modules.{id(cls)}"
    return index.memo(key, lambda: _attribute_modules(index, cls))


def _attribute_modules(index, cls: cst.ClassDef) -> dict[str, cst.CSTNode]:
    plain = cls.name.value not in index.module_classes
    values: dict[str, list] = {}
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        annotated = {}
        for p in (*stmt.params.posonly_params, *stmt.params.params, *stmt.params.kwonly_params):
            if p.annotation is not None:
                q = qualname(p.annotation.annotation, index.imports) or ""
                annotated[p.name.value] = q == "torch.nn.Module" or index.is_module_ctor(q)
        for node in walk(stmt.body):
            if isinstance(node, cst.Assign):
                targets, value = [t.target for t in node.targets], node.value
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            elif isinstance(node, cst.AugAssign):
                targets, value = [node.target], None
            else:
                continue
            for t in targets:
                if isinstance(t, (cst.Tuple, cst.List)):
                    pairs = [(e.value, None) for e in t.elements]   # unpacked: not followed...
                    if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(t.elements) and \
                            not any(isinstance(e, (cst.StarredElement,)) for e in (*t.elements, *value.elements)):
                        # ...unless element by element: `self.online, self.target = Net(), Net()`
                        pairs = [(e.value, v.value) for e, v in zip(t.elements, value.elements)]
                else:
                    pairs = [(t, value)]
                for a, v in pairs:
                    if isinstance(a, cst.Attribute) and isinstance(a.value, cst.Name) and a.value.value == "self":
                        given = isinstance(v, cst.Name) and plain and annotated.get(v.value, False)
                        values.setdefault(a.attr.value, []).append((v, given))
    out: dict[str, cst.CSTNode] = {}
    for attr, vals in values.items():
        vals = [(v, given) for v, given in vals if not _is_none(v)]
        if vals and all(given or (v is not None and is_module_ctor_call(v, index) is not None) for v, given in vals):
            out[attr] = vals[-1][0]
    return out


RULE = ForwardCalledDirectly
