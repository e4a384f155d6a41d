"""Units the verifier can now build: constants made by the project's own pure helpers (pure_calls.py), constructor
arguments from config classes whose fields all have defaults (configs.py). Each case asserts the verdict reached and
that a rewrite that changes behaviour is still refused."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify import source as S

pytest.importorskip("torch")


def req(original: str, rewritten: str, *, path: str, root: str | None = None) -> VerifyRequest:
    return VerifyRequest(path=path, original=textwrap.dedent(original), rewritten=textwrap.dedent(rewritten),
                         rule="GF101", line=1, contract={"kind": "equal"}, project_root=root)


def swap(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


# --------------------------------------------------------------------------- constants from pure helpers

CONSTANTS = '''
from enum import Enum, EnumMeta


class TextMeta(EnumMeta):
    def __instancecheck__(cls, other):
        return "enum" in str(type(other))


class TextEnum(Enum, metaclass=TextMeta):
    def __str__(self):
        return self.value


def choices(names):
    """An enum whose members are the given names."""
    return TextEnum("Choices", {n: n for n in names})


def width_for(n, wide=False):
    w = n * 2
    if wide:
        w = w * 2
    return w


def noisy(n):
    print("building", n)
    return n


MODES = choices(["sum", "mean"])
WIDTH = width_for(4, wide=True)
LOGGED = noisy(3)
'''


def test_strip_runs_calls_to_pure_helpers_only():
    tree = ast.parse(CONSTANTS + "\nSELF = open('x').read()\nVIA = choices(MODES.__doc__)\n")
    st = S.strip_module(tree)
    ns: dict = {}
    exec(compile(st.tree, "<stripped>", "exec"), ns)
    assert [m.value for m in ns["MODES"]] == ["sum", "mean"] and ns["WIDTH"] == 16
    # `noisy` prints, `open` is no pure callable, `MODES.__doc__` is an attribute of an object: all stay dropped
    assert "LOGGED" not in ns and "SELF" not in ns and "VIA" not in ns
    assert {"LOGGED", "SELF", "VIA"} <= st.dropped_names


def test_unit_importing_a_constant_built_by_a_project_helper(verifier, tmp_path):
    """fairseq's form: the model's module imports a constant its package builds with `ChoiceEnum([...])`."""
    pkg = tmp_path / "proj"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "constants.py").write_text(CONSTANTS)
    src = """
    import torch.nn as nn
    from proj.constants import MODES, WIDTH

    class Head(nn.Module):
        def __init__(self, mode=MODES.sum):
            super().__init__()
            self.fc = nn.Linear(WIDTH, 4)
            self.mode = mode

        def forward(self, x):
            y = self.fc(x).sigmoid()
            y *= 2
            return y.sum(-1) if self.mode == MODES.sum else y.mean(-1)
    """
    path = str(pkg / "head.py")
    fixed = swap(src, "y *= 2", "y = y * 2")
    changed = swap(fixed, "y = y * 2", "y = y * 3")
    ok, wrong = verifier.verify_many([req(src, fixed, path=path, root=str(tmp_path)),
                                      req(src, changed, path=path, root=str(tmp_path))])
    # sigmoid saves its output, so the original's in-place *= breaks backward: the rewrite fixes the crash
    assert ok.verdict == "fixes-crash", ok
    assert wrong.verdict == "failed", wrong


# --------------------------------------------------------------------------- a submodule whose dependency is missing

BOARD = """
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        {init}

    def forward(self, x):
        f = self.fc(x).sigmoid()
        f /= 2
        return f
"""


def test_installed_submodule_needing_a_missing_package_is_stubbed(verifier, tmp_path):
    """pytorch-book's form: `torch.utils.tensorboard` without tensorboard installed (stub_fallback.py)."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here: torch.utils.tensorboard imports for real")
    plain = textwrap.dedent(BOARD).format(init="pass")
    logs = textwrap.dedent(BOARD).format(init="self.log = SummaryWriter('runs')")
    path = str(tmp_path / "net.py")
    ok, wrong, used = verifier.verify_many([
        req(plain, swap(plain, "f /= 2", "f = f / 2"), path=path),
        req(plain, swap(plain, "f /= 2", "f = f / 3"), path=path),
        req(logs, swap(logs, "f /= 2", "f = f / 2"), path=path),
    ])
    assert ok.verdict == "fixes-crash" and "Stubbed imports the unit does not use: tensorboard" in ok.detail, ok
    assert wrong.verdict == "failed", wrong
    # the constructor builds a SummaryWriter: the stub is touched, and the missing package is named
    assert used.verdict == "untestable", used
    assert "tensorboard (torch.utils.tensorboard.SummaryWriter)" in used.detail and "install tensorboard" in used.detail


# --------------------------------------------------------------------------- constructor arguments from a call site

SCRIPT = """
import torch
import torch.nn as nn

NUM_FEATURES = 6
NUM_CLASSES = 3


class Classifier(nn.Module):
    def __init__(self, num_features, num_classes, scale=1.0):
        super().__init__()
        self.fc = nn.Linear(num_features, num_classes)
        self.scale = scale

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y *= self.scale
        return y


model = Classifier(NUM_FEATURES, num_classes=NUM_CLASSES, scale=len("ab"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_constructor_arguments_from_a_call_in_the_file(verifier, tmp_path):
    """rasbt's notebooks' form: the model is built once, at module level, from the file's constants."""
    src = textwrap.dedent(SCRIPT)
    fixed = swap(src, "y *= self.scale", "y = y * self.scale")
    changed = swap(fixed, "y = y * self.scale", "y = y * self.scale + 1")
    path = str(tmp_path / "train.py")
    # no call whose arguments are constants: `Classifier(read_width(), 3)` needs a call the verifier does not run
    opaque = swap(src, "Classifier(NUM_FEATURES, num_classes=NUM_CLASSES, scale=len(\"ab\"))",
                  "Classifier(read_width(), 3)")
    ok, wrong, none = verifier.verify_many([req(src, fixed, path=path), req(src, changed, path=path),
                                            req(opaque, swap(opaque, "y *= self.scale", "y = y * self.scale"),
                                                path=path)])
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: the original's in-place *= breaks backward
    assert "Classifier built as `Classifier(NUM_FEATURES, num_classes=NUM_CLASSES, scale=len('ab'))` (the call at " \
           "line 21)" in ok.detail, ok
    assert wrong.verdict == "failed", wrong
    assert none.verdict == "untestable" and "constructor of Classifier needs arguments" in none.detail, none
    assert "no call of Classifier in the file has arguments the verifier can evaluate" in none.detail


# --------------------------------------------------------------------------- a setup that only converts the model

NOTEBOOK = """
import torch
import torch.nn as nn

NUM_CLASSES = 3
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def __init__(self, num_classes, hooked=False):
        super().__init__()
        self.fc = nn.Linear(5, num_classes)
        if hooked:
            self.register_forward_hook(lambda mod, inp, out: out * 2)

    def forward(self, x):
        return self.fc(x)


model = Net(num_classes=NUM_CLASSES{hooked})
model = model.to(DEVICE)
x = torch.randn(2, 5)
out = model.forward(x)
"""


def test_forward_call_receiver_built_by_the_files_own_call(verifier, tmp_path):
    """rasbt's notebooks' form for GF305: the setup found is `model = model.to(DEVICE)`; the file's
    `model = Net(num_classes=NUM_CLASSES)` runs first."""
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": "model.forward(x)",
                "call_new": "model(x)", "setup": "model = model.to(DEVICE)"}
    reqs = []
    for hooked in ("", ", hooked=True"):
        src = textwrap.dedent(NOTEBOOK).format(hooked=hooked)
        reqs.append(VerifyRequest(path=str(tmp_path / "nb.py"), original=src,
                                  rewritten=swap(src, "out = model.forward(x)", "out = model(x)"), rule="GF305",
                                  line=24, contract=contract, project_root=None))
    plain, hooked = verifier.verify_many(reqs)
    assert plain.verdict == "equivalent", plain
    assert "built by `model = Net(num_classes=NUM_CLASSES)` then `model = model.to(DEVICE)`" in plain.detail, plain
    # the model's own hook doubles the output: calling the module changes what the script computes
    assert hooked.verdict == "changes-behaviour", hooked


def test_name_missing_from_an_installed_module_is_stubbed(verifier, tmp_path):
    """stylegan2's lpips form: `from skimage.measure import compare_ssim`, gone from the installed version; here a
    name `torch.nn.functional` never had."""
    src = textwrap.dedent(BOARD).format(init="pass").replace(
        "from torch.utils.tensorboard import SummaryWriter", "from torch.nn.functional import gf_absent_ssim")
    used = src.replace("f = self.fc(x).sigmoid()", "f = gf_absent_ssim(self.fc(x)).sigmoid()")
    path = str(tmp_path / "net_ssim.py")
    ok, wrong, touched = verifier.verify_many([
        req(src, swap(src, "f /= 2", "f = f / 2"), path=path),
        req(src, swap(src, "f /= 2", "f = f / 3"), path=path),
        req(used, swap(used, "f /= 2", "f = f / 2"), path=path),
    ])
    assert ok.verdict == "fixes-crash", ok
    assert "torch.nn.functional.gf_absent_ssim (not in the installed torch)" in ok.detail, ok
    assert wrong.verdict == "failed", wrong
    assert touched.verdict == "untestable" and "torch.nn.functional.gf_absent_ssim" in touched.detail, touched


# --------------------------------------------------------------------------- the import-fallback idiom

FALLBACK = """
import torch
try:
    from a_package_nobody_installed.parallel import ShardedWrapper as Base
    HAS_SHARDED = True
except ImportError:
    Base = torch.nn.Module
    HAS_SHARDED = False
try:
    from another_missing_package import helper
except ImportError:
    helper = make_helper()  # a call: not an alias, the statement stays dropped


class Wrapper(Base):
    pass
"""


def test_strip_keeps_an_import_fallback_to_an_attribute_of_an_import():
    """fairseq's form: `except ImportError: FSDP = torch.nn.Module`, then `class X(FSDP)`."""
    st = S.strip_module(ast.parse(FALLBACK))
    ns: dict = {}
    exec(compile(st.tree, "<stripped>", "exec"), ns)
    import torch

    assert ns["Base"] is torch.nn.Module and ns["HAS_SHARDED"] is False and issubclass(ns["Wrapper"], torch.nn.Module)
    assert "helper" not in ns and "helper" in st.dropped_names


def test_unit_whose_base_class_comes_from_an_import_fallback(verifier, tmp_path):
    pkg = tmp_path / "proj"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "wrap.py").write_text(FALLBACK)
    src = """
    import torch.nn as nn
    from proj.wrap import Wrapper

    class Head(Wrapper):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x).sigmoid()
            y *= 2
            return y.sum(-1)
    """
    path = str(pkg / "head.py")
    fixed = swap(src, "y *= 2", "y = y * 2")
    (res,) = verifier.verify_many([req(src, fixed, path=path, root=str(tmp_path))])
    assert res.verdict == "fixes-crash", res


# --------------------------------------------------------------------------- a file that registers itself at load

REGISTERING = """
import torch.nn as nn
from proj.registry import register

@register("gru_like")
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x).sigmoid()
        y *= 2
        return y.sum(-1)
"""

REGISTRY = """
NAMES = {}

def register(name):
    def deco(cls):
        if name in NAMES:
            raise ValueError(f"Cannot register duplicate name ({name})")
        NAMES[name] = cls
        return cls
    return deco
"""


def test_a_file_that_cannot_load_twice_is_untestable_not_failed(verifier, tmp_path):
    """fairseq's `@register_model_architecture`: the second load raises whatever the rewrite changed."""
    pkg = tmp_path / "proj"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "registry.py").write_text(REGISTRY)
    path = str(pkg / "net.py")
    fixed = swap(REGISTERING, "y *= 2", "y = y * 2")
    (res,) = verifier.verify_many([req(REGISTERING, fixed, path=path, root=str(tmp_path))])
    assert res.verdict == "untestable" and "cannot be loaded twice" in res.detail, res


def test_strip_keeps_a_named_tuple_made_from_type_expressions():
    """fairseq's `EncoderOut = NamedTuple("EncoderOut", [("encoder_out", Tensor), ...])`, imported by its tests."""
    src = textwrap.dedent("""
        from collections import namedtuple
        from typing import List, NamedTuple, Optional
        from torch import Tensor

        Out = NamedTuple("Out", [("x", Tensor), ("mask", Optional[Tensor]), ("states", Optional[List[Tensor]])])
        Pair = namedtuple("Pair", ["a", "b"], defaults=[None, None])
        Mixed = NamedTuple("Mixed", [("x", compute_type())])
    """)
    st = S.strip_module(ast.parse(src))
    ns: dict = {}
    exec(compile(st.tree, "<stripped>", "exec"), ns)
    assert ns["Out"]._fields == ("x", "mask", "states") and ns["Pair"]()._asdict() == {"a": None, "b": None}
    assert "Mixed" not in ns and "Mixed" in st.dropped_names
