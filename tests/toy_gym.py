"""A test double of gym, written here, that the verifier's environment tests put into each project as
`gym/__init__.py` (gradfix's own environment has no gym, and the tests install nothing).

make() knows two wrapped ids whose `.unwrapped` core has other spaces than the wrapper (Maze-v2, Hill-v1: the
spaces a script reads after `env = env.unwrapped` must be the core's), two plain ids (Grid-v1, Swing-v1), a
retired id (Swing-v0 raises DeprecatedEnv naming its successor, as gym does) and raises KeyError for any other;
it refuses `render_mode`, which the verifier must not pass on. Its tables live inside make(): a project's
local module may be loaded with the verifier's top-level filtering, which skips computed module constants."""

TOY_GYM = '''
"""Test double of gym: make(), Box/Discrete spaces with the attributes agents read, a registry of ids."""
__version__ = "0.0.test"


class Box:
    def __init__(self, shape):
        self.shape = tuple(shape)


class Discrete:
    def __init__(self, n):
        self.n = n
        self.shape = ()


class DeprecatedEnv(Exception):
    pass


class _Env:
    render_mode = None

    def __init__(self, obs, act):
        self.observation_space, self.action_space = obs, act

    @property
    def unwrapped(self):
        return self

    def close(self):
        pass


class _Limit(_Env):
    """A wrapper whose own spaces differ from the core's, so that `.unwrapped` is seen to be applied."""

    def __init__(self, core):
        super().__init__(Box((1,)), Discrete(1))
        self.core = core

    @property
    def unwrapped(self):
        return self.core


class envs:
    registry = {"Maze-v2": None, "Hill-v1": None, "Grid-v1": None, "Swing-v1": None}


def make(id, **kwargs):
    if "render_mode" in kwargs:
        raise TypeError("the verifier must not pass render_mode on")
    if id == "Swing-v0":
        raise DeprecatedEnv("Environment version v0 for `Swing` is deprecated. Please use `Swing-v1` instead.")
    wrapped = {"Maze-v2": (7, 3), "Hill-v1": (2, 5)}
    plain = {"Grid-v1": (6, Discrete(3)), "Swing-v1": (5, Box((2,)))}
    if id in wrapped:
        obs, act = wrapped[id]
        return _Limit(_Env(Box((obs,)), Discrete(act)))
    if id not in plain:
        raise KeyError(f"no environment {id}")
    obs, act = plain[id]
    return _Env(Box((obs,)), act)
'''
