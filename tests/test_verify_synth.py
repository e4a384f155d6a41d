"""Units built without fixtures from what the project itself defines: constructor arguments from configuration
objects with defaults (configs.py) and dict batches for a `forward(self, batch)` (batches.py). Each case asserts the
verdict reached, that the detail says what was synthesised, and that a rewrite that changes behaviour is refused;
the coverage rule still holds for a synthesised input."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")


def req(original: str, rewritten: str, path, root=None) -> VerifyRequest:
    return VerifyRequest(path=str(path), original=original, rewritten=rewritten, rule="GF101", line=1,
                         contract={"kind": "equal"}, project_root=str(root) if root else None)


def swap(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


# --------------------------------------------------------------------------- configuration objects

# A GPT-style model file: the config dataclass beside the model, the constructor annotated with it.
GPT = '''
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class GPTConfig:
    vocab_size: int = 40
    n_embd: int = 8
    n_layer: int = 2
    residual: bool = False
    notes: list = field(default_factory=list)


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        h = self.fc(x).sigmoid()
        h *= 2
        if self.config.residual:
            h = h + x
        return h


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])

    def forward(self, idx):
        h = self.wte(idx)
        for b in self.blocks:
            h = b(h)
        return h
'''


def test_dataclass_config_from_the_annotation(verifier, tmp_path):
    src = textwrap.dedent(GPT)
    fixed = swap(src, "h *= 2", "h = h * 2")
    wrong = swap(src, "h *= 2", "h = h * 3")
    # the changed line sits under `if self.config.residual:`, False by default: it never runs on the config built
    branch = swap(fixed, "h = h + x", "h = x + h")
    ok, bad, uncovered = verifier.verify_many([req(src, fixed, tmp_path / "gpt.py"), req(src, wrong, tmp_path / "gpt.py"),
                                               req(fixed, branch, tmp_path / "gpt.py")])
    assert ok.verdict == "fixes-crash", ok  # sigmoid saves its output: the in-place *= breaks backward
    assert "Block built with config = dataclass `GPTConfig()` with its defaults" in ok.detail, ok
    assert bad.verdict == "failed", bad
    assert uncovered.verdict == "untestable" and "did not run" in uncovered.detail, uncovered


# The config lives in its own module of the project, imported without annotation; a second settings class of the
# project lacks the attributes the constructor reads and must not be chosen.
CONFIG_PY = '''
from typing import NamedTuple


class Paths:
    data_root = "data/"
    out_dir = "runs/"


class HParams(NamedTuple):
    in_dim: int = 6
    width: int = 10
    depth: int = 2
'''

MLP_PY = '''
import torch.nn as nn
from settings import HParams, Paths


class MLP(nn.Module):
    def __init__(self, hp):
        super().__init__()
        layers = [nn.Linear(hp.in_dim, hp.width)]
        for _ in range(hp.depth - 1):
            layers += [nn.Tanh(), nn.Linear(hp.width, hp.width)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        y = self.net(x).exp()
        y += 1
        return y
'''


def test_namedtuple_config_imported_from_the_project_matched_by_the_attributes_read(verifier, tmp_path):
    (tmp_path / "settings.py").write_text(textwrap.dedent(CONFIG_PY))
    src = textwrap.dedent(MLP_PY)
    path = tmp_path / "mlp.py"
    path.write_text(src)
    ok, bad = verifier.verify_many([req(src, swap(src, "y += 1", "y = y + 1"), path, tmp_path),
                                    req(src, swap(src, "y += 1", "y = y + 2"), path, tmp_path)])
    assert ok.verdict == "fixes-crash", ok  # exp saves its output
    assert "MLP built with hp = NamedTuple `HParams()` with its defaults" in ok.detail, ok
    assert bad.verdict == "failed", bad


# A DCGAN-style script: a plain settings class (class attributes), the generator built from `opt`.
DCGAN = '''
import torch
import torch.nn as nn


class Config(object):
    data_path = "data/"
    nz = 12
    ngf = 4
    lr = 2e-4


class NetG(nn.Module):
    def __init__(self, opt):
        super().__init__()
        ngf = opt.ngf
        self.main = nn.Sequential(
            nn.ConvTranspose2d(opt.nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False),
        )

    def forward(self, z):
        img = self.main(z).tanh()
        img *= 0.5
        return img


opt = Config()
'''


def test_plain_config_class_with_class_level_settings(verifier, tmp_path):
    src = textwrap.dedent(DCGAN)
    ok, bad = verifier.verify_many([req(src, swap(src, "img *= 0.5", "img = img * 0.5"), tmp_path / "main.py"),
                                    req(src, swap(src, "img *= 0.5", "img = img * 0.25"), tmp_path / "main.py")])
    assert ok.verdict == "fixes-crash", ok  # tanh saves its output
    assert "NetG built with opt = config class `Config()` with its defaults" in ok.detail, ok
    assert bad.verdict == "failed", bad


# A training script with argparse: the model reads `args.*`, the options are defined in the same file.
ARGPARSE = '''
import argparse

import torch
import torch.nn as nn

N_FEATURES = 5

parser = argparse.ArgumentParser()
parser.add_argument("--n-features", type=int, default=N_FEATURES)
parser.add_argument("--hidden", type=int, default="7")
parser.add_argument("--layer_norm", action="store_true")
parser.add_argument("--dropout", type=float, default=0.0)
parser.add_argument("--data", required=True)
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.fc1 = nn.Linear(args.n_features, args.hidden)
        self.norm = nn.LayerNorm(args.hidden) if args.layer_norm else nn.Identity()
        self.drop = nn.Dropout(args.dropout)
        self.fc2 = nn.Linear(args.hidden, 1)

    def forward(self, x):
        h = self.norm(self.fc1(x)).sigmoid()
        h *= 2
        return self.fc2(self.drop(h))


model = Net(args)
'''


def test_argparse_namespace_from_the_files_own_defaults(verifier, tmp_path):
    src = textwrap.dedent(ARGPARSE)
    ok, bad = verifier.verify_many([req(src, swap(src, "h *= 2", "h = h * 2"), tmp_path / "train.py"),
                                    req(src, swap(src, "h *= 2", "h = h * 2.5"), tmp_path / "train.py")])
    assert ok.verdict == "fixes-crash", ok
    # `default="7"` with `type=int` is 7, as argparse makes it; store_true is False; a required option is None
    assert ("Net built with args = the file's argparse defaults `Namespace(n_features=N_FEATURES, hidden=7, "
            "layer_norm=False, dropout=0.0, ... (5 options))`") in ok.detail, ok
    assert bad.verdict == "failed", bad


# A from-scratch GPT chapter: the blocks read `cfg["emb_dim"]`, the config dict is written under `__main__`.
DICT_CFG = '''
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"])
        self.fc2 = nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])

    def forward(self, x):
        h = self.fc1(x).sigmoid()
        h *= 2
        return self.fc2(h)


if __name__ == "__main__":
    GPT_CONFIG_SMALL = {
        "vocab_size": 100,
        "emb_dim": 8,
        "drop_rate": 0.1,
    }
    block = FeedForward(GPT_CONFIG_SMALL)
'''


def test_config_dict_literal_of_the_file(verifier, tmp_path):
    src = textwrap.dedent(DICT_CFG)
    ok, bad = verifier.verify_many([req(src, swap(src, "h *= 2", "h = h * 2"), tmp_path / "gpt_ch04.py"),
                                    req(src, swap(src, "h *= 2", "h = h * 2.5"), tmp_path / "gpt_ch04.py")])
    assert ok.verdict == "fixes-crash", ok
    assert ("FeedForward built with cfg = the file's dict `GPT_CONFIG_SMALL` (line 19: `{'vocab_size': 100, "
            "'emb_dim': 8, 'drop_rate': 0.1}`)") in ok.detail, ok
    assert bad.verdict == "failed", bad


def test_no_config_with_every_attribute_read_stays_untestable(verifier, tmp_path):
    """A dataclass with a field without default is no configuration with defaults; the message says what the
    constructor reads."""
    src = textwrap.dedent(GPT).replace("vocab_size: int = 40", "vocab_size: int")
    res, = verifier.verify_many([req(src, swap(src, "h *= 2", "h = h * 2"), tmp_path / "gpt_nodefault.py")])
    assert res.verdict == "untestable", res
    assert "constructor of Block needs arguments (config)" in res.detail, res
    assert "has every attribute or key the constructor reads (config.n_embd" in res.detail, res
    assert "define fixture_Block(mod)" in res.detail


def test_argparse_defaults_read_statically():
    from gradfix.verify.configs import argparse_defaults

    tree = ast.parse(textwrap.dedent(ARGPARSE) + "\nparser.set_defaults(seed=3)\nparser.add_argument('--w', default=f())\n")
    got = {k: (v if v in (None, False) else ast.unparse(v)) for k, v in argparse_defaults(tree).items()}
    # `f()` is no expression the verifier evaluates at load: that option has no usable default
    assert got == {"n_features": "N_FEATURES", "hidden": "7", "layer_norm": "False", "dropout": "0.0", "data": None,
                   "seed": "3", "w": False}


# --------------------------------------------------------------------------- dict batches

# A text classifier fed by a tokenizer's collate function, and a tabular regressor fed {"x": ..., "y": ...}.
BATCHES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, dim=8, n_classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, batch):
        ids = batch["input_ids"]
        mask = batch["attention_mask"].unsqueeze(-1)
        h = self.emb(ids).sigmoid()
        h *= mask
        logits = self.head(h.sum(1) / mask.sum(1))
        if "labels" in batch:
            return logits, F.cross_entropy(logits, batch["labels"])
        return logits


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 1)

    def forward(self, data):
        x = data["x"]
        out = torch.relu(self.fc(x))
        return F.mse_loss(out, data["y"])


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 6)
        self.out = nn.Linear(6, 4)

    def encode(self, sample):
        return self.emb(sample["tokens"]).exp()

    def forward(self, sample):
        h = self.encode(sample)
        h += 1
        return self.out(h)
'''


def test_dict_batch_with_the_keys_forward_reads(verifier, tmp_path):
    src = textwrap.dedent(BATCHES)
    path = tmp_path / "models.py"
    fixed = swap(src, "h *= mask", "h = h * mask")
    wrong = swap(src, "h *= mask", "h = h * mask * 2")
    # the no-labels branch never runs: the batch built has every key forward reads
    uncovered = swap(fixed, "        return logits\n", "        return logits * 1\n")
    ok, bad, unc = verifier.verify_many([req(src, fixed, path), req(src, wrong, path), req(fixed, uncovered, path)])
    assert ok.verdict == "fixes-crash", ok
    assert ("Input of TextClassifier: batch dict with keys input_ids, attention_mask, labels (input_ids ids (4, 16); "
            "attention_mask ones (4, 16); labels class indices 0/1 (4,)") in ok.detail, ok
    assert bad.verdict == "failed", bad
    assert unc.verdict == "untestable" and "did not run" in unc.detail, unc


def test_dict_batch_float_values_get_gradients_and_mutation_is_seen(verifier, tmp_path):
    src = textwrap.dedent(BATCHES)
    path = tmp_path / "models.py"
    same = swap(src, "out = torch.relu(self.fc(x))", "out = self.fc(x).clamp(min=0)")
    # writes into the caller's batch: the argument after the call differs
    mutates = swap(src, '        x = data["x"]\n', '        x = data["x"]\n        data["x"] = x * 0\n')
    eq, mut = verifier.verify_many([req(src, same, path), req(src, mutates, path)])
    assert eq.verdict == "equivalent", eq
    assert "and the input gradient" in eq.detail, eq  # data["x"] is a leaf: its gradient is compared
    # a regression loss: the target is tried as floats first
    assert "batch dict with keys x, y (x floats (4, 5); y floats (4, 1)" in eq.detail, eq
    assert mut.verdict == "failed" and "the argument['x']" in mut.detail, mut


def test_dict_batch_key_read_by_a_helper_is_found_at_run_time(verifier, tmp_path):
    src = textwrap.dedent(BATCHES)
    path = tmp_path / "models.py"
    ok, bad = verifier.verify_many([req(src, swap(src, "h += 1", "h = h + 1"), path),
                                    req(src, swap(src, "h += 1", "h = h + 2"), path)])
    assert ok.verdict == "fixes-crash", ok  # exp saves its output
    assert "Input of Tagger: batch dict with keys tokens (tokens ids (4, 16)" in ok.detail, ok
    assert bad.verdict == "failed", bad


def test_forward_keys_read_statically():
    from gradfix.verify.batches import forward_keys

    tree = ast.parse(textwrap.dedent(BATCHES))
    assert forward_keys("TextClassifier", tree) == ["input_ids", "attention_mask", "labels"]
    assert forward_keys("Regressor", tree) == ["x", "y"]
    assert forward_keys("Tagger", tree) == []  # read in a helper: found when forward runs
