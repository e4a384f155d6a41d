"""GF305 forward-called-directly: `model.forward(x)` skips the module's hooks."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.flow import Kind
from gradfix.analysis.loops import MODEL_NAMES
from gradfix.analysis.names import dotted, qualname, shorten
from gradfix.analysis.params import all_calls, code_of, root_name
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

# `module` is left out: framework code (wrappers, hooks, DDP itself) calls `module.forward` on purpose
_NAMES = MODEL_NAMES - {"module"}


def _modelish(name: str) -> bool:
    return name.lower() in _NAMES


class ForwardCalledDirectly(Rule):
    id = "GF305"
    name = "forward-called-directly"
    summary = "`model.forward(x)` called from outside the module skips its hooks"
    docs = RuleDocs(
        what=(
            "Finds `m.forward(...)` where `m` is a module: a name bound to an `nn.Module` constructor or a model "
            "class of the file (also wrapped: `weight_norm(nn.Linear(...))`, `spectral_norm(...)`, pruning), a "
            "name like `model`/`net`/`encoder`, or a registered submodule `self.encoder`. "
            "Never fires on `super().forward(...)`, `self.forward(...)` inside the module's own methods, "
            "`Base.forward(self, x)`, or code that scripts, traces, exports or compiles (`torch.jit`, "
            "`torch.onnx.export`, `torch.export`, `torch.compile`) in the same function or on the same name."
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
        fix="Calls the module: `model(x)` (arguments kept).",
        fix_safety=(
            "Safe when the file registers no hook on that module (then `model(x)` computes exactly "
            "`model.forward(x)`); unsafe when it does (the hooks now run, which is the point). The verifier decides."
        ),
        verification=(
            "`forward-call`: inside an `nn.Module` class the module check (`equal`) on the class. Elsewhere the "
            "module is built from the statement that binds it (`model = Net()`, plus hook registrations on it in "
            "the same scope), an input is inferred from its first layer, and `m(x)` is compared with `m.forward(x)` "
            "(outputs, parameter and input gradients), then a test forward hook shows that only the call runs "
            "hooks: `equivalent` with no hooks registered, `expected-change` when registered hooks change the "
            "result. A module built from function arguments is `untestable` (a fixture helps)."
        ),
    )

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
        hooked = self._hooked(ctx, recv)
        message = (f"`{shorten(code_of(call))}` calls forward() directly: the hooks of `{name}` are skipped "
                   f"(hook-based weight_norm/spectral_norm, pruning, FSDP2); call the module: `{name}(...)`")
        new_call = call.with_changes(func=recv)
        contract = {"kind": "forward-call", "receiver": name, "in_class": bool(in_module),
                    "call_old": code_of(call), "call_new": code_of(new_call)}
        if setup:
            contract["setup"] = setup
        fix = ctx.fix(f"call the module: `{shorten(code_of(new_call))}`", [Edit(call, new_call)],
                      Safety.UNSAFE if hooked else Safety.SAFE, contract)
        return ctx.finding(call, message, fix)

    # -- what the receiver is ----------------------------------------------
    def _receiver(self, ctx, call, recv, flow) -> tuple[str | None, str | None]:
        """(setup statement(s) that build it, how it is known to be a module) or (None, None)."""
        index = ctx.index
        if isinstance(recv, cst.Attribute):
            attr = recv.attr.value
            if isinstance(recv.value, cst.Name) and recv.value.value == "self":
                # only a submodule this class builds: a wrapper's `self.module` given by the caller
                # (DDP, RemoteModule, compiled graphs) calls forward on purpose
                cls = index.enclosing_class(call)
                if cls is not None and attr in index.submodules.get(cls.name.value, {}):
                    return None, "submodule"
                return None, None
            return (None, "name") if _modelish(attr) else (None, None)
        if not isinstance(recv, cst.Name):
            return None, None
        bindings = [b for b in flow.bindings if b.name == recv.value]
        if not bindings and flow.scope is not ctx.module:
            flow = index.flow(ctx.module)
            bindings = [b for b in flow.bindings if b.name == recv.value]
        for b in bindings:
            if isinstance(b.value, cst.Call):
                q = qualname(b.value.func, index.imports) or ""
                if q.startswith(_EXPORT_PREFIXES):
                    return None, None  # scripted / traced / compiled: not a plain module
                if q in _FORWARD_WRAPPERS:
                    return None, None  # DDP / DataParallel do their work in forward() itself
                if q in index.classes and q not in index.module_classes:
                    return None, None  # an instance of a plain class of this file (a numpy model, a tokenizer)
        module_bindings = [b for b in bindings if b.kind is Kind.MODULE and not (b.ctor or "").endswith("Loss")]
        if module_bindings:
            b = module_bindings[-1]
            setup = None
            if isinstance(b.value, cst.BaseExpression) and b.step >= 0:
                lines = [f"{recv.value} = {code_of(b.value)}"]
                for st in flow.steps[b.step + 1:]:
                    node = st.node
                    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
                        text = code_of(node.value)
                        root = root_name(node.value.func) if isinstance(node.value.func, cst.Attribute) else None
                        if root is not None and root.value == recv.value and "register_" in text and "hook" in text:
                            lines.append(text)
                setup = "\n".join(lines)
            return setup, "binding"
        if _modelish(recv.value) and not any(b.kind not in (Kind.UNKNOWN, Kind.OTHER, Kind.MODULE) for b in bindings):
            return None, "name"
        return None, None

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

    def _hooked(self, ctx, recv) -> bool:
        """Whether the file registers hooks (or hook-based reparametrisations) anywhere near this module."""
        root = root_name(recv)
        for node in walk(ctx.module):
            if isinstance(node, cst.Call):
                text = code_of(node.func)
                if any(w in text for w in _HOOK_WORDS):
                    if root is None or root.value in ("self",) or root.value in code_of(node):
                        return True
        return False


RULE = ForwardCalledDirectly
