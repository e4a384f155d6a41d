"""A GF305 receiver that is a method's parameter stays untestable, and the reason names the method it comes into,
not "module-level code"."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")


SRC = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Profiler:
        def __init__(self, reps=3):
            self.reps = reps

        def time_forward(self, flow: nn.Module, x):
            for _ in range(self.reps):
                out = flow.forward(x)
            return out
''')


def test_a_method_parameter_receiver_names_the_method(tmp_path, shared_verifier):
    old, new = "flow.forward(x)", "flow(x)"
    contract = {"kind": "forward-call", "receiver": "flow", "in_class": False, "call_old": old, "call_new": new}
    req = VerifyRequest(path=str(tmp_path / "prof.py"), original=SRC, rewritten=SRC.replace(old, new), rule="GF305",
                        line=12, contract=contract, project_root=None)
    res = shared_verifier.verify_many([req])[0]
    assert res.verdict == "untestable", res
    assert "it comes from outside Profiler.time_forward" in res.detail, res
    assert "module-level code" not in res.detail, res
