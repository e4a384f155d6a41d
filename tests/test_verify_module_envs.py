"""Environments a script makes at its top level, and the constants it derives from them, which classes read when
they are built (module_envs.py): `env = gym.make("Maze-v2")`, `env = env.unwrapped`, `N_OBS =
env.observation_space.shape[0]` before `class QNet` sizes its layers from them. The loader does not run those
statements; the worker makes the environment and binds them. A binding whose environment other top-level code changes,
a rebinding that is not right after the make, and an environment that cannot be made stay `untestable`, saying why.

gradfix's own environment has no gym: each project carries a small `gym` package of our own that the worker imports
from the project root, as it would the real one from the project's venv."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.gym_envs import EnvScope
from gradfix.verify.module_envs import module_bindings
from gradfix.verify.source import evaluable
from toy_gym import TOY_GYM

pytest.importorskip("torch")


SCRIPT = """
import gym
import torch
import torch.nn as nn

env = gym.make("{env_id}")
env = env.unwrapped
N_OBS = env.observation_space.shape[0]
N_ACT = env.action_space.n
{extra}

class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_OBS, 16)
        self.fc2 = nn.Linear(16, N_ACT)
        if N_ACT > 4:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Learner:
    def __init__(self):
        self.q = QNet()

    def act(self, obs):
        return self.q.forward(obs).argmax()
"""


def request(root: Path, src: str) -> VerifyRequest:
    (root / "gym").mkdir(parents=True, exist_ok=True)
    (root / "gym" / "__init__.py").write_text(TOY_GYM, encoding="utf-8")
    (root / "learner.py").write_text(src, encoding="utf-8")
    call = "self.q.forward(obs)"
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "learner.py"), original=src, rewritten=src.replace(call, "self.q(obs)"),
                         rule="GF305", line=line,
                         contract={"kind": "forward-call", "receiver": "q", "in_class": False, "call_old": call,
                                   "call_new": "self.q(obs)", "setup": "q = QNet()"},
                         project_root=str(root))


def script(env_id: str = "Maze-v2", extra: str = "") -> str:
    return textwrap.dedent(SCRIPT).format(env_id=env_id, extra=extra)


CASES = {
    "made": script(),
    "hooked": script("Hill-v1"),  # 5 actions: the network registers a hook that only the call runs
    "written": script(extra="env.observation_space = gym.Box((3,))"),
    "unknown": script("Pit-v0"),
    "late": script().replace("env = env.unwrapped\nN_OBS = env.observation_space.shape[0]\n",
                             "N_OBS = env.observation_space.shape[0]\nenv = env.unwrapped\n"),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    base = tmp_path_factory.mktemp("module_envs")
    reqs = [request(base / name, src) for name, src in CASES.items()]
    return dict(zip(CASES, shared_verifier.verify_many(reqs)))


def test_a_network_sized_from_the_module_level_environment(verdicts):
    v = verdicts["made"]
    assert v.verdict == "equivalent", v
    assert ("The script's top-level `env = gym.make('Maze-v2')`, then `env = env.unwrapped` made in the worker (gym "
            "0.0.test); N_OBS, N_ACT computed from it as the module's top level does.") in v.detail, v


def test_the_real_spaces_decide_the_verdict(verdicts):
    # Hill-v1 has 5 actions after `.unwrapped` (the wrapper's own space has 1): the hook is registered, and the
    # call differs from forward; had the wrapper's spaces been used, there would be no hook
    v = verdicts["hooked"]
    assert v.verdict == "changes-behaviour", v
    assert "forward hook" in v.detail, v


def test_an_environment_other_top_level_code_changes_is_not_made(verdicts):
    v = verdicts["written"]
    assert v.verdict == "untestable", v
    assert "uses the module-level name 'N_OBS', which is set by module-level code the verifier does not execute" \
        in v.detail, v


def test_an_environment_that_cannot_be_made_is_named(verdicts):
    v = verdicts["unknown"]
    assert v.verdict == "untestable", v
    assert ("uses the module-level name 'N_OBS', set from an environment the verifier could not make: `env = "
            "gym.make('Pit-v0')`, then `env = env.unwrapped` (learner.py, line 6): making it raises KeyError") \
        in v.detail, v


def test_a_constant_read_before_the_rebinding_is_not_made(verdicts):
    # N_OBS comes from the wrapped environment, env is rebound after it: the binding is refused as a whole
    v = verdicts["late"]
    assert v.verdict == "untestable", v
    assert "module-level name 'N_OBS', which is set by module-level code the verifier does not execute" in v.detail, v


# --------------------------------------------------------------------------- the static half


def bindings(src: str) -> dict:
    tree = ast.parse(textwrap.dedent(src))
    return {b.name: b.then for b in module_bindings(tree)}


def test_rebinding_right_after_the_make():
    assert bindings("""
        import gym
        env = gym.make("Maze-v2")
        env = env.unwrapped
        n = env.action_space.n
    """) == {"env": (("unwrapped",),), "n": ()}


@pytest.mark.parametrize("src", [
    # rebound far from the make, or to something else, or twice to a make
    "import gym\nenv = gym.make('Maze-v2')\nx = 1\nenv = env.unwrapped\nn = env.action_space.n\n",
    "import gym\nenv = gym.make('Maze-v2')\nenv = wrap(env)\nn = env.action_space.n\n",
    "import gym\nenv = gym.make('Maze-v2')\nenv = env.unwrapped\nn = env.action_space.n\nenv = gym.make('Hill-v1')\n",
    "import gym\nenv = gym.make('Maze-v2')\nenv.action_space = None\nn = env.action_space.n\n",
    "import gym\nenv = gym.make('Maze-v2')\nenv.spec[0] = None\nn = env.action_space.n\n",
])
def test_forms_that_are_not_made(src):
    assert "n" not in bindings(src)


def test_call_sites_see_the_rebinding_too():
    tree = ast.parse("import gym\nenv = gym.make('Maze-v2')\nenv = env.unwrapped\nagent = Agent(env)\n")
    scope = EnvScope(tree, evaluable(tree))
    b = scope.at(None, 4)["env"]
    assert b.env_id == "Maze-v2" and b.then == (("unwrapped",),)
