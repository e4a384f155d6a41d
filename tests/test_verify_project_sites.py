"""Constructor arguments from a call in another file of the project (call_sites.project_sites): the model is defined
in one file and built from constants in the script that trains it. Each case asserts the verdict, that the detail
names the file and line the arguments came from, and that a rewrite that changes behaviour is still refused."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.call_sites import project_sites

pytest.importorskip("torch")

NET = """
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width, classes, scale=1.0):
        super().__init__()
        self.fc = nn.Linear(width, classes)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y *= self.scale
        return y
"""

TRAIN = """
import math
import torch
from {module} import Head as Model

WIDTH = 6
CLASSES = int(math.sqrt(9))
open("ran.txt", "w").write("the script ran")  # must never run: only the constants are evaluated


def main(args):
    model = Model(args.width, CLASSES)  # not constants: skipped
    model = Model(WIDTH, classes=CLASSES, scale=2.0)
    model(torch.randn(2, WIDTH)).sum().backward()


if __name__ == "__main__":
    main(None)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


def request(root: Path, rel: str, new: str) -> VerifyRequest:
    src = (root / rel).read_text(encoding="utf-8")
    return VerifyRequest(path=str(root / rel), original=src, rewritten=src.replace("y *= self.scale", new),
                         rule="GF101", line=13, contract={"kind": "equal"}, project_root=str(root))


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    base = tmp_path_factory.mktemp("projects")
    built = base / "built"  # pkg/net.py defines Head; train.py builds it with constants
    write(built, {"pkg/__init__.py": "", "pkg/net.py": NET, "train.py": TRAIN.format(module="pkg.net")})
    opaque = base / "opaque"  # the only call takes its arguments from the command line
    write(opaque, {"net.py": NET, "train.py": TRAIN.format(module="net").replace(
        "model = Model(WIDTH, classes=CLASSES, scale=2.0)", "model = Model(args.width, args.classes)")})
    twins = base / "twins"  # a/net.py and b/net.py: b/train.py's `from net import Head` is b's, never a's
    write(twins, {"a/net.py": NET, "b/net.py": NET, "b/train.py": TRAIN.format(module="net")})
    return {"built": built, "opaque": opaque, "twins": twins}


@pytest.fixture(scope="module")
def verdicts(projects, shared_verifier):
    reqs = [
        request(projects["built"], "pkg/net.py", "y = y * self.scale"),
        request(projects["built"], "pkg/net.py", "y = y * self.scale + 1"),
        request(projects["opaque"], "net.py", "y = y * self.scale"),
        request(projects["twins"], "a/net.py", "y = y * self.scale"),
        request(projects["twins"], "b/net.py", "y = y * self.scale"),
    ]
    return shared_verifier.verify_many(reqs)


def test_module_built_by_the_training_script(verdicts, projects):
    ok, wrong = verdicts[0], verdicts[1]
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: the in-place `*=` breaks backward
    assert "Head built as `Model(WIDTH, classes=CLASSES, scale=2.0)` (the call at train.py, line 13)" in ok.detail
    assert wrong.verdict == "failed", wrong  # the same configuration still refuses a rewrite that changes the output
    assert not list(projects["built"].rglob("ran.txt"))


def test_no_call_with_constant_arguments_is_untestable(verdicts):
    none = verdicts[2]
    assert none.verdict == "untestable", none
    assert "no call of Head in the file or the project's other files has arguments" in none.detail, none


def test_a_call_binds_only_to_the_file_its_imports_name(verdicts):
    a, b = verdicts[3], verdicts[4]
    assert a.verdict == "untestable" and "constructor of Head needs arguments" in a.detail, a
    assert b.verdict == "fixes-crash" and "(the call at b/train.py, line 13)" in b.detail, b


def test_the_arguments_are_evaluated_afresh_from_the_constants_only(projects, tmp_path):
    root = projects["built"]
    src = (root / "pkg/net.py").read_text(encoding="utf-8")
    (site,) = project_sites(str(root / "pkg/net.py"), ast.parse(src), "Head", str(root), src)
    assert (site.file, site.line) == ("train.py", 13)
    first, second = site.values(None), site.values(None)
    assert first == ((6,), {"classes": 3, "scale": 2.0}) == second
    # a list argument is a new object per evaluation: one version's constructor cannot mutate the other's
    write(tmp_path, {"m.py": NET, "run.py": "from m import Head\nSIZES = [6, 3]\nh = Head(SIZES, 3)\n"})
    msrc = (tmp_path / "m.py").read_text(encoding="utf-8")
    (lst,) = project_sites(str(tmp_path / "m.py"), ast.parse(msrc), "Head", str(tmp_path), msrc)
    assert lst.values(None)[0][0] is not lst.values(None)[0][0]


# --------------------------------------------------------------------------- constants of the calling function

SCRIPT = NET + """

def main():
    torch_seed = 0
    classes = 3
    {extra}model = Head(6, classes, scale=float(classes))
    return model, torch_seed
"""


PARTIAL = NET + """
import functools

WIDTH = 6
head = functools.partial(Head, WIDTH, scale=0.5)


def build():
    return head(3, scale=2.0)
"""


def test_a_call_through_functools_partial(more):
    through = more[5]
    assert through.verdict == "fixes-crash", through
    assert "Head built as `Head(WIDTH, 3, scale=2.0)` via `head = functools.partial(Head, WIDTH, scale=0.5)` (the " \
           "call at line 23)" in through.detail, through


def test_aliases_and_partials_a_call_may_use():
    tree = ast.parse(textwrap.dedent("""
        import functools
        from functools import partial
        H = 4
        Model = Net
        make = functools.partial(Net, 3, hidden=H)
        other = partial(Net, width=2)
        twice = Net
        twice = Other
        wrapped = functools.partial(Other, 1)
    """))
    from gradfix.verify.call_sites import aliases

    found = aliases(tree, "Net")
    assert set(found) == {"Net", "Model", "make", "other"}  # `twice` is bound twice; `wrapped` wraps another class
    assert found["Model"] is None and ast.unparse(found["make"]) == "functools.partial(Net, 3, hidden=H)"
    # `partial` rebound by the file is not functools'
    assert "other" not in aliases(ast.parse("from functools import partial\npartial = print\nother = partial(Net)\n"),
                                  "Net")


# --------------------------------------------------------------------------- a network held by an agent

AGENT = """
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, lr, dims, actions, hooked=False):
        super().__init__()
        self.fc = nn.Linear(dims[0], actions)
        self.lr = lr
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out + 1)

    def forward(self, state):
        return self.fc(state).relu()


class Agent:
    def __init__(self, lr, dims, actions, hooked=False, memory=100):
        self.memory = [None] * memory
        self.q = QNet(lr, dims, actions=actions, hooked=hooked)

    def act(self, state):
        return self.q.forward(state).argmax()
"""

INMAIN = AGENT.split("class Agent")[0] + """
def train(model, state):
    return model.forward(state)


def main():
    dims = [8]
    n = len(dims) * 4
    model = QNet(0.1, dims, actions=n)
    train(model, None)
"""


def test_network_built_in_main_from_its_constants(more):
    built = more[6]
    assert built.verdict == "equivalent", built
    assert "`model` built by `model = QNet(0.1, dims, actions=n)` with `dims = [8], n = len(dims) * 4` set before it " \
           "in main()" in built.detail, built


MAIN = """
import sys
from agent import Agent

if __name__ == "__main__":
    agent = Agent(lr=0.001, dims=[8], actions=4, memory=int(sys.argv[1]){hooked})
"""


def forward_call(root: Path, setup: str) -> VerifyRequest:
    src = (root / "agent.py").read_text(encoding="utf-8")
    return VerifyRequest(path=str(root / "agent.py"), original=src,
                         rewritten=src.replace("self.q.forward(state)", "self.q(state)"), rule="GF305", line=22,
                         contract={"kind": "forward-call", "receiver": "q", "in_class": False,
                                   "call_old": "self.q.forward(state)", "call_new": "self.q(state)", "setup": setup},
                         project_root=str(root))


@pytest.fixture(scope="module")
def more(tmp_path_factory, shared_verifier):
    base = tmp_path_factory.mktemp("more")
    reqs = []
    for name, extra in (("local", ""), ("rebound", "classes += 1\n    ")):
        write(base / name, {"m.py": SCRIPT.format(extra=extra)})
        reqs.append(request(base / name, "m.py", "y = y * self.scale"))
    for name, hooked in (("plain", ""), ("hooked", ", hooked=True")):
        write(base / name, {"agent.py": AGENT, "main.py": MAIN.format(hooked=hooked)})
        reqs.append(forward_call(base / name, "q = QNet(lr, dims, actions=actions, hooked=hooked)"))
    write(base / "nocall", {"agent.py": AGENT})
    reqs.append(forward_call(base / "nocall", "q = QNet(lr, dims, actions=actions, hooked=hooked)"))
    write(base / "partial", {"m.py": PARTIAL})
    reqs.append(request(base / "partial", "m.py", "y = y * self.scale"))
    write(base / "inmain", {"agent.py": INMAIN})
    src = (base / "inmain" / "agent.py").read_text(encoding="utf-8")
    reqs.append(VerifyRequest(path=str(base / "inmain" / "agent.py"), original=src,
                              rewritten=src.replace("model.forward(state)", "model(state)"), rule="GF305", line=18,
                              contract={"kind": "forward-call", "receiver": "model", "in_class": False,
                                        "call_old": "model.forward(state)", "call_new": "model(state)",
                                        "setup": "model = QNet(0.1, dims, actions=n)"}, project_root=None))
    return shared_verifier.verify_many(reqs)


def test_arguments_from_constants_of_the_calling_function(more):
    local, rebound = more[0], more[1]
    assert local.verdict == "fixes-crash", local
    assert "Head built as `Head(6, classes, scale=float(classes))` (the call at line 20, after `classes = 3` in " \
           "main())" in local.detail, local
    # `classes += 1` binds it twice: not a constant of main() any more
    assert rebound.verdict == "untestable" and "constructor of Head needs arguments" in rebound.detail, rebound


def test_network_built_from_the_agents_constructor_call(more):
    plain, hooked, nocall = more[2], more[3], more[4]
    assert plain.verdict == "equivalent", plain
    assert "`q` built as Agent.__init__ builds it, with actions, dims, hooked, lr from `Agent(lr=0.001, dims=[8], " \
           "actions=4, memory=int(sys.argv[1]))` (the call of Agent at main.py, line 6)" in plain.detail, plain
    # `memory` comes from the command line, but the build does not read it; `hooked` is its default
    assert hooked.verdict == "changes-behaviour", hooked  # the hook the agent's call asks for changes the output
    assert nocall.verdict == "untestable", nocall
    assert "`q` is built in Agent.__init__ from its parameter(s) actions, dims, hooked, lr, and no call of Agent" \
           in nocall.detail, nocall


def test_call_site_names_include_the_enclosing_functions_constants():
    """`CallSite.names()` (what a salvaged file's dropped text must not bind): the arguments' names, and the
    names of the enclosing function's constants the arguments read, which it binds itself."""
    import ast

    from gradfix.verify.call_sites import CallSite

    call = ast.parse("Net(width, depth=d)").body[0].value
    site = CallSite(line=3, text="Net(width, depth=d)", args=call.args, kwargs={k.arg: k.value for k in call.keywords},
                    prelude=[("width", ast.parse("base * 2").body[0].value)])
    assert site.names() == {"width", "d", "base"}
