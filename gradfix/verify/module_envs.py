"""Module-level environments a script makes before its classes use them, which the loader does not run.

RL scripts and notebooks make their environment at the top level and size their networks from it:

    env = gym.make("CartPole-v0")
    env = env.unwrapped
    N_STATES = env.observation_space.shape[0]

    class Net(nn.Module):
        def __init__(self):
            ...
            self.fc1 = nn.Linear(N_STATES, 50)

The loader runs only imports, definitions and constants, so `Net()` raised NameError. These bindings are the
EnvScope's module bindings (gym_envs.py: a `gym.make` with a literal id bound once, or rebound only to an attribute
of itself on the very next statements, and constants computed from its attributes with nothing but what the
verifier evaluates), and the environment is made in the worker with the project's own gym, as for a call site's
argument: the real spaces, no stand-in. They are bound into the loaded module after it ran, each version from its
own tree, and only where the loader left the name unset. A name whose environment cannot be made stays unset, and
the reason is kept for the `untestable` detail. A binding whose environment the module's other top-level code may
change (an attribute or item stored into it) is not made.
"""

from __future__ import annotations

import ast
import types

from . import source as S


def _written(tree: ast.Module) -> set[str]:
    """Names whose value a top-level statement stores into (`env.observation_space = ...`, `env[0] = ...`)."""
    out: set[str] = set()
    for st in tree.body:
        for n in ast.walk(st):
            if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
                root = n.value
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(root, ast.Name):
                    out.add(root.id)
    return out


def module_bindings(tree: ast.Module) -> list:
    """The module's environment bindings (gym_envs.EnvBinding) in source order; [] without a gym import."""
    from .gym_envs import EnvScope, needed

    scope = EnvScope(tree, S.evaluable(tree))
    if not scope.module:
        return []
    written = _written(tree)
    keep = {}
    for name, b in scope.module.items():
        chain = needed(scope.module, {name})
        if not any(x.name in written for x in chain):
            keep[name] = b
    return sorted(keep.values(), key=lambda b: b.line)


def bind_module_envs(tree: ast.Module, mod: types.ModuleType, unset: set[str], where: str) -> tuple[list, dict]:
    """Bind into `mod` the environment bindings of `tree` whose names the loader left unset (`unset`: the names only
    dropped statements set). Returns (notes saying how each environment was made, name -> why it is unset)."""
    from .call_sites import _eval_in
    from .gym_envs import EnvUnavailable, make_env

    ns = mod.__dict__
    notes: list[str] = []
    derived: list[str] = []
    reasons: dict[str, str] = {}
    for b in module_bindings(tree):
        if b.name not in unset or b.name in ns:
            continue
        read = {x.id for x in ast.walk(b.value) if isinstance(x, ast.Name)}
        if b.package is None and read & set(reasons):
            reasons[b.name] = reasons[next(iter(sorted(read & set(reasons))))]
            continue
        try:
            if b.package is not None:
                ns[b.name], note = make_env(b, where)
                notes.append(note)
            else:
                ns[b.name] = _eval_in(b.value, ns, mod.__file__ or "<module>")
                derived.append(b.name)
        except EnvUnavailable as e:
            reasons[b.name] = str(e)
        except Exception as e:  # noqa: BLE001 - an attribute the environment does not have
            from .runtime import fmt_exc

            reasons[b.name] = f"`{b.name} = {b.text}` raises {fmt_exc(e)}"
    if notes:
        notes = [f"The script's top-level {'; '.join(notes)}" + (f"; {', '.join(derived)} computed from it as the module's "
                                                            f"top level does" if derived else "")]
    return notes, reasons
