"""`collections.namedtuple(...)` through a plain `import collections` is a type factory the verifier runs at load
(source._is_type_factory), as `from collections import namedtuple` already was: a module whose annotations name
the tuple (`def priors(specs: List[Spec])`, evaluated at the `def`) loads. A rebound module name or a
field list that is not literal is still skipped."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S

pytest.importorskip("torch")


def classified(src: str) -> tuple[list[str], list[str]]:
    _kept, computed, dropped = S.classify_module(ast.parse(textwrap.dedent(src)))
    return [ast.unparse(s) for s in computed], [ast.unparse(s) for s in dropped]


def test_attribute_factories_of_a_plainly_imported_module_run():
    run, skipped = classified("""
        import collections
        import typing as t
        Spec = collections.namedtuple('Spec', ['size', 'stride'])
        Pair = t.NamedTuple('Pair', [('a', t.Any), ('b', t.Any)])
        Fields = collections.namedtuple('Fields', make_fields())
        Other = collections.OrderedDict(a=1)
    """)
    assert run == ["Spec = collections.namedtuple('Spec', ['size', 'stride'])",
                   "Pair = t.NamedTuple('Pair', [('a', t.Any), ('b', t.Any)])"]
    assert "Fields = collections.namedtuple('Fields', make_fields())" in skipped
    assert "Other = collections.OrderedDict(a=1)" in skipped
    _run, skipped = classified("import collections\ncollections = load()\nS = collections.namedtuple('S', ['a'])\n")
    assert "S = collections.namedtuple('S', ['a'])" in skipped  # the name is not the module's any more


NET = """
import collections
from typing import List

import torch
import torch.nn as nn

Spec = collections.namedtuple('Spec', ['size', 'scale'])


def priors(specs: List[Spec]) -> torch.Tensor:
    return torch.tensor([[s.size * s.scale] for s in specs], dtype=torch.get_default_dtype())


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y *= priors([Spec(2, 0.5), Spec(3, 0.25)]).sum()
        return y
"""

CHANGED = "y *= priors([Spec(2, 0.5), Spec(3, 0.25)]).sum()"


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("factories")
    (root / "net.py").write_text(textwrap.dedent(NET), encoding="utf-8")
    src = (root / "net.py").read_text(encoding="utf-8")
    line = 1 + src.splitlines().index("        " + CHANGED)
    reqs = [VerifyRequest(path=str(root / "net.py"), original=src,
                          rewritten=src.replace(CHANGED, new), rule="GF101", line=line,
                          contract={"kind": "equal"}, project_root=str(root))
            for new in (CHANGED.replace("y *=", "y = y *"), CHANGED.replace("y *=", "y = y *") + " + 1")]
    return shared_verifier.verify_many(reqs)


def test_a_module_importing_the_tuple_loads(verdicts):
    ok, wrong = verdicts
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: the in-place `*=` breaks backward
    assert wrong.verdict == "failed", wrong
