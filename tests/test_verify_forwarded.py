"""A network held by a worker whose only call is in another holder's constructor, which passes its own parameter
on (forwarded.py, the A3C chain): `Worker(i, env, lr)` in `Agent.__init__(self, env, lr)`, `Agent(env, 1e-3)` in the
script after `env = gym.make(...)`. Each case asserts the verdict and the detail naming both calls; the environment
really flows through (a hook that only some action spaces register changes the verdict), and an `__init__` that
rebinds or mutates the parameter, or a call that leaves it to its default, gives nothing.

The tests install nothing: each project carries a small `gym` package of our own that the worker imports from the
project root."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

TOY_GYM = '''
"""A stand-in for gym: make() of two ids, the spaces' attributes agents read."""
__version__ = "0.0.toy"


class _Space:
    def __init__(self, shape=(), n=None):
        self.shape, self.n = tuple(shape), n


class _Env:
    render_mode = None

    def __init__(self, obs, actions):
        self.observation_space, self.action_space = _Space((obs,)), _Space(n=actions)

    def close(self):
        pass


class envs:
    registry = {"Line-v1": None, "Grid-v1": None}


def make(id, **kwargs):
    return {"Line-v1": lambda: _Env(4, 2), "Grid-v1": lambda: _Env(5, 3)}[id]()
'''

WORKER = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, n_in, n_out, hooked=False):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, obs):
        return torch.tanh(self.fc(obs))


class Worker:
    def __init__(self, number, env, lr):
        self.name = "w%d" % number
        self.obs_dim = env.observation_space.shape[0]
        self.n_act = env.action_space.n
        self.net = Policy(self.obs_dim, self.n_act, hooked=self.n_act > 2)
        self.lr = lr

    def act(self, obs):
        return self.net.forward(obs).argmax()
"""

AGENT = """
from worker import Worker


class Agent:
    def __init__(self, env, lr=0.1):
        {extra}self.workers = [Worker(i, env, lr) for i in range(2)]
"""

RUN = """
import gym
from agent import Agent


def train():
    agent = Agent({args})
    return agent


if __name__ == "__main__":
    env = gym.make("{env_id}")
    train()
"""

CALL = "self.net.forward(obs)"
SETUP = "net = Policy(self.obs_dim, self.n_act, hooked=self.n_act > 2)"


def project(root: Path, env_id: str = "Line-v1", extra: str = "", args: str = "env, 1e-3") -> VerifyRequest:
    files = {"worker.py": WORKER, "agent.py": AGENT.replace("{extra}", extra), "gym/__init__.py": TOY_GYM,
             "run.py": RUN.replace("{args}", args).replace("{env_id}", env_id)}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    src = (root / "worker.py").read_text(encoding="utf-8")
    new = CALL.replace(".forward(", "(")
    line = next(i for i, t in enumerate(src.splitlines(), 1) if CALL in t)
    return VerifyRequest(path=str(root / "worker.py"), original=src, rewritten=src.replace(CALL, new), rule="GF305",
                         line=line, contract={"kind": "forward-call", "receiver": "net", "in_class": False,
                                              "call_old": CALL, "call_new": new, "setup": SETUP},
                         project_root=str(root))


CASES = {
    "line": {},
    "grid": {"env_id": "Grid-v1"},  # 3 actions: the policy registers its hook, which only the call runs
    "rebound": {"extra": "env = env.unwrapped\n        "},
    "mutated": {"extra": "env.action_space = None\n        "},
    "missing": {"args": "lr=1e-3"},  # env not given: the call does not bind
    "keyword_default": {"args": "lr=1e-3, env=env"},
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    base = tmp_path_factory.mktemp("a3c")
    reqs = []
    for name, kw in CASES.items():
        (base / name).mkdir()
        reqs.append(project(base / name, **kw))
    return dict(zip(CASES, shared_verifier.verify_many(reqs)))


def test_network_built_from_the_parameter_the_agent_passes_on(verdicts):
    v = verdicts["line"]
    assert v.verdict == "equivalent", v
    assert ("env from `Worker(i, env, lr)` in Agent.__init__, which passes on its env from `Agent(env, 0.001)` (the "
            "call of Agent at run.py, line 7; `env = gym.make('Line-v1')` made in the worker (gym 0.0.toy))` (the "
            "call of Worker at agent.py, line 7)") in v.detail, v
    kw = verdicts["keyword_default"]
    assert kw.verdict == "equivalent" and "from `Agent(lr=0.001, env=env)`" in kw.detail, kw


def test_the_environment_flows_through_the_chain(verdicts):
    v = verdicts["grid"]
    assert v.verdict == "changes-behaviour", v  # the hook only `net(x)` runs: the rewrite is not a no-op here


@pytest.mark.parametrize("case", ["rebound", "mutated", "missing"])
def test_a_parameter_the_agent_changes_or_is_not_given_is_not_followed(verdicts, case):
    v = verdicts[case]
    assert v.verdict == "untestable", v
    assert ("`net` is built in Worker.__init__ from env, self.obs_dim, self.n_act, and no call of Worker in the file "
            "or the project gives them arguments") in v.detail, v
