"""GF301 deprecated-cuda-amp: `torch.cuda.amp.GradScaler` / `torch.cuda.amp.autocast` / `torch.cpu.amp.autocast`."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.params import all_calls, code_of, last_name, make_kwarg, torch_expr_for
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

# deprecated qualname -> (api, device)
DEPRECATED = {
    "torch.cuda.amp.GradScaler": ("GradScaler", "cuda"),
    "torch.cuda.amp.grad_scaler.GradScaler": ("GradScaler", "cuda"),
    "torch.cuda.amp.autocast": ("autocast", "cuda"),
    "torch.cuda.amp.autocast_mode.autocast": ("autocast", "cuda"),
    "torch.cpu.amp.autocast": ("autocast", "cpu"),
    "torch.cpu.amp.autocast_mode.autocast": ("autocast", "cpu"),
}
_LAST_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in DEPRECATED) | {"autocast", "GradScaler"}
# positional parameters of the deprecated autocast classes, in order (torch 2.13)
AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")


class DeprecatedCudaAmp(Rule):
    id = "GF301"
    name = "deprecated-cuda-amp"
    summary = "`torch.cuda.amp.GradScaler` / `torch.cuda.amp.autocast` / `torch.cpu.amp.autocast` are deprecated"
    docs = RuleDocs(
        what=(
            "Finds calls of `torch.cuda.amp.GradScaler(...)`, `torch.cuda.amp.autocast(...)` and "
            "`torch.cpu.amp.autocast(...)` however they are imported (`import torch.cuda.amp as amp`, "
            "`from torch.cuda.amp import autocast, GradScaler`), in `with` items, decorators and assignments. "
            "`torch.amp.GradScaler(\"cuda\")`, `torch.autocast(\"cuda\")` and `torch.amp.autocast(...)` are the "
            "current API and are left alone."
        ),
        why=(
            "Each call emits `FutureWarning: torch.cuda.amp.GradScaler(args...) is deprecated` (torch 2.13) and the "
            "module is slated for removal. It is not a learning hazard: the old classes are thin subclasses of the "
            "new ones. The first seed uses both (`torch.cuda.amp.GradScaler()`, `torch.cuda.amp.autocast(True)`). "
            "The rewrite has one trap: the new `torch.autocast(device_type, dtype, enabled, ...)` takes `dtype` "
            "second, so a naive `torch.autocast(\"cuda\", True)` silently sets `dtype=True` (measured: "
            "`fast_dtype` becomes `True`)."
        ),
        example="scaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast(True):\n    loss = crit(net(x), y)",
        fixed_example=(
            "scaler = torch.amp.GradScaler(\"cuda\")\nwith torch.autocast(\"cuda\", enabled=True):\n"
            "    loss = crit(net(x), y)"
        ),
        fix=(
            "`torch.amp.GradScaler(\"cuda\", <args as they were>)` (the new signature only adds the device in front); "
            "`torch.autocast(\"cuda\" | \"cpu\", <keywords>)`, with positional arguments turned into keywords "
            "(`enabled=`, `dtype=`, `cache_enabled=`) because the positions differ. The file's own spelling of "
            "`torch` is reused; when the call was imported by name and `torch` itself is not imported, it is "
            "reported without a fix. An import line left unused is not touched (your linter will say so). "
            "TorchFix (TOR101) covers `autocast` only, not `GradScaler`."
        ),
        fix_safety="Safe: the same class is constructed with the same settings. The verifier checks it.",
        verification=(
            "`same-object`: both call expressions are evaluated in the loaded file's namespace (imports and module "
            "constants kept; arguments that name local variables are replaced by probe values, the same in both, "
            "bound by the old signature) and the objects compared: a `torch.amp.GradScaler` with equal device, "
            "enabled flag, init scale, growth and backoff factors and growth interval; an autocast with equal "
            "device type, fast dtype, enabled flag and cache flag. On a CPU-only build CUDA AMP disables itself, so "
            "the objects are built with CUDA availability simulated and the detail says so; CPU autocast is also "
            "entered and a matmul compared. `equivalent`."
        ),
    )

    def check(self, ctx):
        index = ctx.index
        imports = index.imports
        for node in all_calls(index):
            if last_name(node.func) not in _LAST_NAMES:
                continue
            q = qualname(node.func, imports)
            if q not in DEPRECATED:
                continue
            api, device = DEPRECATED[q]
            yield self._finding(ctx, node, api, device)

    def _finding(self, ctx, call: cst.Call, api: str, device: str):
        old = code_of(call)
        new_call, why_not = self._rewrite(ctx, call, api, device)
        if new_call is not None:
            new = code_of(new_call)
            message = (f"`{shorten(old)}` is deprecated (FutureWarning in torch 2.13); use `{shorten(new)}`: the same "
                       f"object, current API")
            fix = ctx.fix(f"use `{shorten(new)}`", [Edit(call, new_call)], Safety.SAFE,
                          {"kind": "same-object", "api": api, "device": device, "old": old, "new": new})
            return ctx.finding(call, message, fix)
        target = f'torch.amp.GradScaler("{device}", ...)' if api == "GradScaler" else f'torch.autocast("{device}", ...)'
        return ctx.finding(call, f"`{shorten(old)}` is deprecated (FutureWarning in torch 2.13); use `{target}` "
                                 f"({why_not})")

    def _rewrite(self, ctx, call: cst.Call, api: str, device: str):
        imports = ctx.index.imports
        suffix = "amp.GradScaler" if api == "GradScaler" else "autocast"
        func = torch_expr_for(call.func, imports, suffix)
        if func is None:
            return None, "no fix: `torch` is not imported in this file"
        dev = cst.Arg(value=cst.SimpleString(f'"{device}"'))
        if call.args and isinstance(call.args[0].comma, cst.Comma):
            dev = dev.with_changes(comma=call.args[0].comma)  # same layout as the first argument
        if api == "GradScaler":
            # torch.amp.GradScaler(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled):
            # the old positions follow the device unchanged.
            return call.with_changes(func=func, args=[dev] + list(call.args)), None
        args = []
        positional = 0
        for a in call.args:
            if a.star == "*":
                return None, "no fix: `*args` cannot be mapped onto the new positions"
            if a.keyword is None and not a.star:
                if positional >= len(AUTOCAST_POSITIONAL):
                    return None, "no fix: too many positional arguments"
                kw = make_kwarg(AUTOCAST_POSITIONAL[positional], a.value)
                args.append(kw.with_changes(comma=a.comma, whitespace_after_arg=a.whitespace_after_arg))
                positional += 1
            else:
                args.append(a)
        return call.with_changes(func=func, args=[dev] + args), None


RULE = DeprecatedCudaAmp
