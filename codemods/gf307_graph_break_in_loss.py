"""GF307 graph-break-in-loss: `.detach()` / `.item()` / `.numpy()` / `.tolist()` / `torch.tensor(...)`
of a prediction on the way to the loss (detect only)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.gradpath import GradPaths, straight_through
from gradfix.analysis.loops import training_loops
from gradfix.analysis.names import qualname, shorten
from gradfix.analysis.tree import contains, walk
from gradfix.rule import Rule, RuleDocs


def _short(code: str) -> str:
    return shorten(code, 60)


def _other_paths(tl, paths: GradPaths) -> bool:
    """Whether the loss still carries gradient from a module the step runs other than the ones it
    counts as trained (`self.actor` next to `self.critic(s).detach()`): then backward() runs, and the
    "only path" claim does not hold."""
    others = paths.step_modules() - paths.trained
    if others and GradPaths(tl, trained=others).carries(tl.loss):
        return True
    # the loss calls a method of the model holding a trained part, defined where this file cannot read it
    # (`vae.decode(z)` of an imported class): it may run that part, so "only path" is not shown
    return paths.reaches_unknown_method(tl.loss)


# Ops whose result is an integer or boolean tensor: no gradient flows back through them, so a `.detach()`
# whose value only feeds one cuts nothing (`torch.argmax(soft1.detach(), dim=1)`: a pseudo-label).
_INTEGER_FUNCS = frozenset({"torch.argmax", "torch.argmin", "torch.eq", "torch.ne", "torch.gt", "torch.ge",
                            "torch.lt", "torch.le", "torch.isnan", "torch.isinf", "torch.isfinite", "torch.sign",
                            "torch.bucketize", "torch.searchsorted"})
_INTEGER_METHODS = frozenset({"argmax", "argmin", "eq", "ne", "gt", "ge", "lt", "le", "long", "int", "bool", "byte",
                              "short", "isnan", "isinf", "isfinite", "sign"})


def _feeds_integer_op(call: cst.Call, index) -> bool:
    """The cut value goes straight into an op whose result has no gradient (`torch.argmax(p.detach(), 1)`,
    `p.detach().argmax(1)`, `p.detach() > 0.5`, `.long()`): there was no gradient to cut."""
    parent = index.parents.get(call)
    if isinstance(parent, cst.Attribute) and parent.value is call:
        owner = index.parents.get(parent)
        return parent.attr.value in _INTEGER_METHODS and isinstance(owner, cst.Call) and owner.func is parent
    if isinstance(parent, cst.Comparison) or isinstance(index.parents.get(parent), cst.Comparison):
        return True
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        owner = index.parents.get(parent)
        return isinstance(owner, cst.Call) and owner.args and owner.args[0] is parent and \
            qualname(owner.func, index.imports) in _INTEGER_FUNCS
    return False


class GraphBreakInLoss(Rule):
    id = "GF307"
    name = "graph-break-in-loss"
    summary = "A prediction is cut from autograd (`.detach()`, `.item()`, `torch.tensor(...)`) on its way to the loss"
    docs = RuleDocs(
        what=(
            "In a training step (the statements up to `backward()`), finds `.detach()`, `.item()`, `.numpy()`, "
            "`.tolist()`, `float(...)`, `torch.tensor(...)`, `torch.as_tensor(...)` and `torch.from_numpy(...)` "
            "applied to a value computed from a module being trained (one whose `.parameters()` an optimizer "
            "stepped after this backward holds: every optimizer the update steps before the next backward counts, "
            "so in cross pseudo supervision or mutual learning, `loss.backward(); opt1.step(); opt2.step()`, a term "
            "whose live input is the second model's output trains that model; the members of a trained container run in a "
            "loop count too, `for block in blocks: h, aux = block(h)`, as does a method of a trained module, "
            "`critic.q_min(s, a)`, and so do values appended to a list, "
            "`auxes.append(aux)` then `torch.tensor(auxes)`), when the cut value flows into the loss and either the loss keeps no other gradient "
            "path from the model, or the cut sits in a term added to the loss that then carries no gradient. "
            "Also a cut inside the forward of a model class of the file: `weights = weights.detach()` before "
            "`return {\"weight\": weights, ...}` (or a tuple position, or the whole output), when the step adds a "
            "term built only from that entry (`loss + outputs[\"weight\"].pow(2).mean()`); a cut under a test of "
            "the mode (`if not self.training:`) is an inference path and left alone, and so is a returned entry "
            "the loss does not rely on alone (logged, or next to a value that carries gradient). "
            "Intentional stop-gradients are left alone: outputs of modules the optimizer does not hold (target "
            "networks, teachers, EMA copies, the generator in a GAN's discriminator step: `D(fake.detach())`), "
            "anything under `torch.no_grad()`, straight-through estimators (`x + (y - x).detach()`, "
            "`y_hard - y_soft.detach() + y_soft`), stop-gradients inside a term that still carries gradient "
            "(TD targets `mse(q, r + g * q_next.detach())`, SimSiam's `p1 * z2.detach()`), `.item()` for logging, and "
            "actor-critic / PPO updates whose critic value is cut from the actor's advantage on purpose "
            "(`advantage = returns - values.detach()`, `(td_target - v).detach() * log_pi`): whenever the loss "
            "still reaches another module the step runs (the actor, or anything whose `.parameters()` the file "
            "hands an optimizer, but for target/EMA-named copies), backward runs, so the \"only path\" claim is "
            "not made; the critic learns from its own loss. A cut whose value goes straight into an op with no "
            "gradient (`torch.argmax(probs.detach(), dim=1)` as a pseudo-label, `.argmax()`, a comparison, `.long()`) "
            "cuts nothing: the result had no gradient to lose. A term built by a call that is handed a trained "
            "module (`gradient_penalty(critic, real, fake.detach())` in a WGAN-GP critic step) is not shown dead: the "
            "function may run the module, so the detach there cuts only the generator. Only bindings that can reach "
            "the backward are read: an earlier loop's `loss = (pred - y).pow(2).sum().item()` (a previous notebook "
            "cell fitting plain tensors by hand) is not part of a loss that the training loop binds again, on every "
            "path, before `loss.backward()`. The positional argument of `y.backward(torch.tensor(grad))` "
            "on a tensor is the upstream `gradient`, not a loss: what is backpropagated is `y` (only a non-tensor "
            "receiver, `accelerator.backward(loss)`, takes its argument as the loss). A detached normalising scale "
            "(TD3+BC: `lmbda = eta / q.abs().mean().detach(); loss = bc - lmbda * q.mean()`, or `lam * "
            "q.abs().mean().detach() * mse(pi, a)`) cuts nothing while another factor of the term carries gradient; "
            "paths are judged against what the stepped optimizer holds (`self.actor_optimizer` built in `__init__` "
            "trains the actor, not the critic the actor's action is fed to), and a loss bound in exclusive branches "
            "(`if ...: q_loss = -lmbda * q1.mean() else: q_loss = -lmbda * r(a).mean()`) carries if one branch does. "
            "A method of the model that holds the trained part counts as running it when its body (in this file, "
            "through other methods it calls on `self`, two levels) reads that part: with only `vae.decoder` "
            "stepped, `rec = vae.decode(z.detach())` (decode running `self.decoder(z)`) still trains the decoder, so "
            "`mse(rec, x.detach())` is live; a method whose body reads only other parts (`vae.embed(out.detach())` "
            "running `self.encoder`) is not, and one whose class or body the file does not show (an imported model "
            "class) may run it: such a term is not shown dead, and the loss is not shown to lack another path."
        ),
        why=(
            "The cut value is a constant to autograd. When it was the only path, `backward()` raises `element 0 of "
            "tensors does not require grad and does not have a grad_fn`, or, if the loss was re-wrapped with "
            "`torch.tensor(..., requires_grad=True)`, runs and leaves every model gradient None: the loss is printed, "
            "nothing learns. When it was one term, that term silently contributes nothing (a regulariser that does "
            "nothing)."
        ),
        example="out = model(x)\nloss = criterion(out.detach(), y)\nloss.backward()",
        fixed_example="out = model(x)\nloss = criterion(out, y)\nloss.backward()",
        fix="Detect only: whether the stop-gradient is intended needs a human; drop the break if it is not.",
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
        for _scope, flow, tl in training_loops(index):
            paths = GradPaths(tl)
            if not paths.trained:
                continue
            loss_carries = paths.carries(tl.loss)
            dead_terms = [part for t in paths.additive_terms() if paths.dead_term(t) for part in paths.reaches(t)]
            others: bool | None = None
            for _stmt, value in paths.loss_values():
                for call, inner in paths.breaks_in(value):
                    if id(call) in seen or straight_through(call, index) or _feeds_integer_op(call, index):
                        continue
                    in_dead_term = any(contains(t, call) for t in dead_terms)
                    if loss_carries and not in_dead_term:
                        continue
                    if not loss_carries and others is None:
                        others = _other_paths(tl, paths)
                    if not loss_carries and others:
                        continue  # actor-critic: the advantage is cut on purpose, the actor still reaches the loss
                    seen.add(id(call))
                    yield ctx.finding(call, self._message(ctx, paths, call, inner, loss_carries))
            # the model's forward returns the value already cut: `weights = weights.detach()` in forward,
            # `outputs["weight"]` added to the loss
            parts = dead_terms if loss_carries else [value for _stmt, value in paths.loss_values()]
            for part in parts:
                for node in walk(part):
                    cut = paths.forward_cuts.get(id(node))
                    if cut is None or cut[1] != "detach" or id(cut[0]) in seen or straight_through(cut[0], index):
                        continue
                    seen.add(id(cut[0]))
                    yield ctx.finding(cut[0], self._forward_message(ctx, paths, node, cut, loss_carries))

    def _forward_message(self, ctx, paths, used, cut, loss_carries) -> str:
        what, cls = _short(ctx.code(cut[0])), cut[2]
        src = ", ".join(f"`{n}`" for n in sorted(paths.trained))
        line = ctx.span(used).line
        effect = ("that term contributes no gradient; it only changes the logged loss value" if loss_carries else
                  "the loss keeps no other path, so backward() raises \"element 0 of tensors does not require grad\", "
                  "or, if the loss is re-wrapped as a new tensor, nothing learns")
        return (f"`{what}` in `{cls}.forward` cuts a returned value from autograd, and the training step adds "
                f"`{_short(ctx.code(used))}` (line {line}) to the loss of {src} ({paths.trained_from}): {effect}; "
                f"return it without `.detach()` if it is meant to be trained")

    def _message(self, ctx, paths, call, inner, loss_carries) -> str:
        what = _short(ctx.code(call))
        src = ", ".join(f"`{n}`" for n in sorted(paths.trained))
        if not loss_carries:
            return (f"`{what}` cuts `{_short(ctx.code(inner))}` from autograd on its way to the loss, and it was the "
                    f"only path from {src} ({paths.trained_from}): backward() raises \"element 0 of tensors does not "
                    f"require grad\", or, if the loss is re-wrapped as a new tensor, every gradient of {src} stays None")
        return (f"`{what}` cuts `{_short(ctx.code(inner))}` from autograd inside a term added to the loss: that term "
                f"contributes no gradient to {src} ({paths.trained_from}); it only changes the logged loss value")


RULE = GraphBreakInLoss
