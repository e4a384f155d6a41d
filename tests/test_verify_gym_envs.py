"""Networks an RL agent builds in `__init__` from the environment its caller makes (held_builds.held_build with
gym_envs.py): `Learner(env, lr)` after `env = gym.make("Grid-v1")`, the attributes `__init__` sets from it
(`self.n_in = env.observation_space.shape[0]`) read by the build, keyword arguments over the environment's spaces, a
retired version made as its successor, and the reasons given when no environment can be made.

gradfix's own environment has no gym, and the tests install nothing: each project carries a small `gym` package of
our own (make(), two spaces, a registry) that the worker imports from the project root, as it would the real one
from the project's venv."""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.held_builds import _self_attrs
from gradfix.verify.gym_envs import EnvScope, env_names, needed
from gradfix.verify.source import evaluable
from toy_gym import TOY_GYM

pytest.importorskip("torch")


BROKEN_GYMNASIUM = 'raise ImportError("this test project has no gymnasium")\n'

AGENT = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, n_in, n_out, hooked=False):
        super().__init__()
        self.body = nn.Linear(n_in, 16)
        self.head = nn.Linear(16, n_out)
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, obs):
        return self.head(torch.tanh(self.body(obs)))


class Learner:
    def __init__(self, env, lr):
        self.env = env
        self.n_in = env.observation_space.shape[0]
        self.n_out = env.action_space.n
        self.device = torch.device("cpu")
        self.policy = Policy(self.n_in, self.n_out).to(self.device)
        self.lr = lr

    def act(self, obs):
        return self.policy.forward(obs).argmax()


class Critic:
    def __init__(self, input_dims, n_actions):
        self.q = Policy(input_dims[0], n_actions, hooked=n_actions > 3)

    def value(self, obs):
        return self.q.forward(obs)
"""

RUN_GRID = """
import gym
from agent import Learner

env = gym.make("Grid-v1", render_mode="human")
learner = Learner(env, 1e-3)
"""

RUN_SWING = """
import gym
from agent import Critic


def main():
    env = gym.make("Swing-v0")
    critic = Critic(input_dims=env.observation_space.shape, n_actions=env.action_space.shape[0])


if __name__ == "__main__":
    main()
"""

RUN_OPAQUE = """
import sys
import gym
from agent import Learner

env = gym.make(sys.argv[1])
learner = Learner(env, 1e-3)
"""

RUN_NOGYM = """
import gymnasium as gym
from agent import Learner

if __name__ == "__main__":
    env = gym.make("Grid-v1")
    learner = Learner(env, 1e-3)
"""

RUN_WIDE = """
import gym
from agent import Critic

env = gym.make("Grid-v1")
n_obs = env.observation_space.shape
critic = Critic(n_obs, 4)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


def forward_call(root: Path, recv: str, call: str, setup: str) -> VerifyRequest:
    src = (root / "agent.py").read_text(encoding="utf-8")
    new = call.replace(".forward(", "(")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if call in t)
    return VerifyRequest(path=str(root / "agent.py"), original=src, rewritten=src.replace(call, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": recv, "in_class": False,
                                              "call_old": call, "call_new": new, "setup": setup},
                         project_root=str(root))


LEARNER = ("policy", "self.policy.forward(obs)", "policy = Policy(self.n_in, self.n_out).to(self.device)")
CRITIC = ("q", "self.q.forward(obs)", "q = Policy(input_dims[0], n_actions, hooked=n_actions > 3)")


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    base = tmp_path_factory.mktemp("rl")
    cases = {"grid": ({"run.py": RUN_GRID}, LEARNER), "swing": ({"run.py": RUN_SWING}, CRITIC),
             "opaque": ({"run.py": RUN_OPAQUE}, LEARNER),
             "nogym": ({"run.py": RUN_NOGYM, "gymnasium/__init__.py": BROKEN_GYMNASIUM}, LEARNER),
             "wide": ({"run.py": RUN_WIDE}, CRITIC)}
    reqs = []
    for name, (files, (recv, call, setup)) in cases.items():
        write(base / name, {"agent.py": AGENT, "gym/__init__.py": TOY_GYM, **files})
        reqs.append(forward_call(base / name, recv, call, setup))
    # the agent in a folder that is also a package of that name: the script beside it imports the sibling module
    pkg = base / "pkg"
    write(pkg, {"agent/__init__.py": "", "agent/agent.py": AGENT, "agent/run.py": RUN_GRID, "gym/__init__.py": TOY_GYM})
    req = forward_call(pkg / "agent", *LEARNER)
    reqs.append(dataclasses.replace(req, project_root=str(pkg)))
    return dict(zip(list(cases) + ["pkg"], shared_verifier.verify_many(reqs)))


def test_network_built_from_the_environment_the_script_makes(verdicts):
    v = verdicts["grid"]
    assert v.verdict == "equivalent", v
    assert ("`policy` built as Learner.__init__ builds it, with `self.n_in`, `self.n_out`, `self.device` as "
            "Learner.__init__ sets them, env from `Learner(env, 0.001)` (the call of Learner at run.py, line 6; "
            "`env = gym.make('Grid-v1', render_mode='human')` made in the worker (gym 0.0.test), its render_mode "
            "left out)") in v.detail, v


def test_keyword_arguments_over_the_spaces_and_a_retired_version(verdicts):
    v = verdicts["swing"]
    assert v.verdict == "equivalent", v  # Swing-v1's action space has 2 dimensions: no hook (n_actions > 3)
    assert "input_dims, n_actions from `Critic(input_dims=env.observation_space.shape, n_actions=env.action_space." \
           in v.detail, v
    assert "(the call of Critic at run.py, line 8; `env = gym.make('Swing-v0')` made as `Swing-v1` in the worker: " \
           "gym 0.0.test has retired `Swing-v0` (DeprecatedEnv:" in v.detail, v


def test_a_module_constant_derived_from_the_environment(verdicts):
    # `n_obs = env.observation_space.shape` is evaluated once env is made; with 4 actions the critic registers its
    # hook, which only the call runs: the rewrite is not taken for a no-op
    v = verdicts["wide"]
    assert v.verdict == "changes-behaviour", v
    assert "from `Critic(n_obs, 4)` (the call of Critic at run.py, line 7; `env = gym.make('Grid-v1')` made in the " \
           "worker (gym 0.0.test))" in v.detail, v


def test_a_script_beside_the_agent_in_a_folder_that_is_also_a_package(verdicts):
    v = verdicts["pkg"]
    assert v.verdict == "equivalent", v
    assert "(the call of Learner at agent/run.py, line 6; `env = gym.make('Grid-v1', render_mode='human')` made" \
        in v.detail, v


def test_an_id_that_is_not_a_literal_is_named(verdicts):
    v = verdicts["opaque"]
    assert v.verdict == "untestable", v
    assert ("`policy` is built in Learner.__init__ from env, self.n_in, self.n_out, self.device, and the call of "
            "Learner that gives them passes an environment: `env = gym.make(sys.argv[1])` (run.py, line 6) makes an "
            "environment whose id (or another argument) is not a literal") in v.detail, v


def test_a_package_the_projects_interpreter_cannot_import_is_named(verdicts):
    v = verdicts["nogym"]
    assert v.verdict == "untestable", v
    assert "`env = gym.make('Grid-v1')` (run.py, line 6) needs gymnasium, which is not importable with " in v.detail, v
    assert "ImportError: this test project has no gymnasium" in v.detail, v


# --------------------------------------------------------------------------- the static half, without a worker


def test_environment_bindings_and_the_arguments_over_them():
    tree = ast.parse(textwrap.dedent("""
        import gymnasium as gym
        import sys
        env = gym.make("Grid-v1")
        dims = env.observation_space.shape
        other = gym.make(sys.argv[1])
        twice = gym.make("Grid-v1")
        twice = None

        def main(env):
            return Agent(env)

        def run():
            inner = gym.make("Swing-v1", max_steps=5)
            return Agent(inner, dims, env.observation_space.sample())
    """))
    ok = evaluable(tree)
    scope = EnvScope(tree, ok)
    assert set(scope.module) == {"env", "dims", "other"}  # `twice` is bound twice
    assert scope.module["env"].package == "gymnasium" and scope.module["env"].env_id == "Grid-v1"
    assert scope.module["other"].env_id is None and scope.module["dims"].package is None
    main, run = tree.body[-2], tree.body[-1]
    assert "env" not in scope.at(main, 99)  # the parameter shadows the module's environment
    local = scope.at(run, 99)
    assert local["inner"].kwargs == (("max_steps", 5),)
    call = run.body[1].value
    assert env_names(call.args[0], local, ok, frozenset()) == {"inner"}
    assert env_names(call.args[1], local, ok, frozenset()) == {"dims"}
    assert [b.name for b in needed(local, {"dims"})] == ["env", "dims"]
    assert env_names(call.args[2], local, ok, frozenset()) is None  # a call on the environment is not evaluated


def _init(src: str):
    cls = ast.parse(textwrap.dedent(src)).body[0]
    init = cls.body[0]
    build = next(s for s in init.body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "self.net")
    return _self_attrs(cls, init, build, "self", build.value)


def test_attributes_the_build_reads_resolve_through_init():
    found = _init("""
        class A:
            def __init__(self, env):
                self.env = env
                self.k = self.env.action_space.n
                self.unused = open("x")
                self.net = Net(env.observation_space.shape[0], self.k)
    """)
    assert [(x, ast.unparse(v)) for x, v in found] == [("env", "env"), ("k", "self.env.action_space.n")]
    twice = _init("""
        class A:
            def __init__(self, env):
                self.k = env.action_space.n
                self.net = Net(self.k)

            def reset(self):
                self.k = 0
    """)
    assert "it reads `self.k`, which A does not set once by a plain `self.k = ...` of __init__" in twice
    assert "it calls self.sizes() on the object under construction" in _init("""
        class A:
            def __init__(self, env):
                self.net = Net(self.sizes())
    """)
    assert "it reads `self`, the object under construction" in _init("""
        class A:
            def __init__(self, env):
                self.net = Net(self)
    """)


def test_a_critic_input_joined_after_the_first_layer():
    import torch
    import torch.nn as nn

    from gradfix.verify.inputs import infer_input

    class Critic(nn.Module):  # forward(state, action): the action joins the state's features after the first layer
        def __init__(self, n_obs, n_act):
            super().__init__()
            self.first = nn.Linear(n_obs, 32)
            self.joined = nn.Linear(32 + n_act, 1)

        def forward(self, state, action):
            return self.joined(torch.cat([self.first(state).relu(), action], 1))

    state, action = infer_input("critic", [Critic(3, 2).double()], torch.float64)
    assert tuple(state.shape) == (4, 3) and tuple(action.shape) == (4, 2)
    assert not torch.equal(action, state[:, :2])  # a draw of its own
