"""Constructor arguments from a factory function's parameter defaults (call_sites.parameter_defaults): model files
often build each network only in a `def tiny(classes=10): return Net(classes)` factory; called with no arguments
it builds a configuration the project defines. Each case asserts the verdict and the detail that names the defaults;
a factory that rebinds or may mutate the parameter, or whose default is not a constant, gives nothing."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S
from gradfix.verify.call_sites import call_sites

pytest.importorskip("torch")

NET = """
import os
import torch.nn as nn

HIDDEN = 5


class Net(nn.Module):
    def __init__(self, width, sizes, classes):
        super().__init__()
        self.inner = nn.Linear(width, sizes[0])
        self.out = nn.Linear(sizes[0], classes)

    def forward(self, x):
        y = self.out(self.inner(x)).sigmoid()
        y *= 2.0
        return y


{factory}
"""

GOOD = """
def tiny(width=4, sizes=[HIDDEN], classes=3, pretrained=None):
    model = Net(width, sizes, classes)
    if pretrained is not None:
        model.load_state_dict(pretrained)
    return model
"""

FACTORIES = {
    "good": GOOD,
    "rebound": GOOD.replace("    model = Net", "    classes = classes + 1\n    model = Net"),
    "mutated": GOOD.replace("    model = Net", "    sizes.append(7)\n    model = Net"),
    "opaque": GOOD.replace("classes=3", "classes=os.cpu_count()"),
    "required": GOOD.replace("def tiny(", "def tiny(depth, ").replace("sizes, classes)", "sizes, depth)"),
}


def request(root: Path, new: str) -> VerifyRequest:
    src = (root / "m.py").read_text(encoding="utf-8")
    line = 1 + src.splitlines().index("        y *= 2.0")
    return VerifyRequest(path=str(root / "m.py"), original=src, rewritten=src.replace("y *= 2.0", new),
                         rule="GF101", line=line, contract={"kind": "equal"}, project_root=None)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    base = tmp_path_factory.mktemp("factories")
    reqs = []
    for name, factory in FACTORIES.items():
        (base / name).mkdir()
        (base / name / "m.py").write_text(NET.format(factory=textwrap.dedent(factory)), encoding="utf-8")
        reqs.append(request(base / name, "y = y * 2.0"))
    reqs.append(request(base / "good", "y = y * 2.0 + 1"))
    return dict(zip(list(FACTORIES) + ["wrong"], shared_verifier.verify_many(reqs)))


def test_module_built_with_the_factory_defaults(verdicts):
    ok = verdicts["good"]
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: `*=` breaks its backward
    line = 1 + NET.format(factory=textwrap.dedent(GOOD)).splitlines().index("    model = Net(width, sizes, classes)")
    assert f"Net built as `Net(width, sizes, classes)` (the call at line {line}, with tiny()'s defaults `width=4, " \
           "sizes=[HIDDEN], classes=3`)" in ok.detail, ok
    wrong = verdicts["wrong"]
    assert wrong.verdict == "failed", wrong  # the configuration still refuses a rewrite that changes the output


@pytest.mark.parametrize("name", ["rebound", "mutated", "opaque", "required"])
def test_no_defaults_taken_when_the_parameter_is_not_the_default(verdicts, name):
    v = verdicts[name]
    assert v.verdict == "untestable", v
    assert "constructor of Net needs arguments" in v.detail, v


def test_defaults_combine_with_the_functions_constants():
    tree = ast.parse(textwrap.dedent("""
        import torch.nn as nn
        class Net(nn.Module):
            pass
        def build(depth=2, *extra, scale=1.5, **kw):
            width = depth * 4
            return Net(width, scale)
    """))
    (site,) = call_sites(tree, "Net")
    assert [n for n, _v in site.prelude] == ["depth", "scale", "width"]
    assert site.defaults == {"depth", "scale"}
    assert "with build()'s defaults `depth=2, scale=1.5` and after `width = depth * 4` in build()" in site.place
    assert S.evaluable(tree) is not None
