"""Dict batches: a `forward(self, batch)` that reads `batch["input_ids"]`, `batch["labels"]`.

The keys are read from the class's `forward` in both versions of the file (`batch["k"]`, `batch.get("k")`, also
through `b = batch`); a key the static read misses is added when forward raises `KeyError` for it. Each value is
shaped the way the verifier infers any input, from the model's first Conv/Linear/Embedding/RNN layer: the first
plain key gets that input, other plain keys inputs of the same shape with other values; a key named like a mask gets
ones (batch x length), like labels class indices 0/1 (per sample, then per position) or floats, like lengths the
full length. The combinations are tried in that order until the original's forward runs. This is an input choice
like any other: the coverage rule applies, and the verdict's detail names the keys and what each held.
"""

from __future__ import annotations

import ast
import itertools
from typing import Callable

import torch

from .runtime import SEED_INPUT

MAX_COMBOS = 24
MAX_KEYS = 12

_LABEL = {"label", "labels", "target", "targets", "y", "cls", "class", "classes", "category", "tgt_label"}
_LENGTH = {"length", "lengths", "len", "lens", "seq_len", "seq_lens", "seq_lengths", "lengths_x"}


def _forward_def(tree: ast.Module, name: str, depth: int = 0) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            for s in node.body:
                if isinstance(s, ast.FunctionDef) and s.name == "forward":
                    return s
            for b in node.bases:
                if isinstance(b, ast.Name) and depth < 5:
                    found = _forward_def(tree, b.id, depth + 1)
                    if found is not None:
                        return found
            return None
    return None


def _keys_in(fn: ast.FunctionDef) -> list[str]:
    args = [a.arg for a in fn.args.posonlyargs + fn.args.args][1:]
    if len(args) != 1:
        return []
    names = {args[0]}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in names:
            names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    out: list[str] = []
    nodes = [n for n in ast.walk(fn) if isinstance(getattr(n, "lineno", None), int)]
    for n in sorted(nodes, key=lambda n: (n.lineno, getattr(n, "col_offset", None) or 0)):
        key = None
        if (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)
                and n.value.id in names and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)):
            key = n.slice.value
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
              and isinstance(n.func.value, ast.Name) and n.func.value.id in names and n.args
              and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
            key = n.args[0].value
        if key is not None and key not in out:
            out.append(key)
    return out


_REGRESSION = ("mse", "l1_loss", "L1Loss", "huber", "Huber", "smooth_l1", "SmoothL1")


def forward_keys(name: str, *trees: ast.Module) -> list[str]:
    """String keys `forward(self, batch)` of class `name` reads from its one argument, over the given versions."""
    out: list[str] = []
    for tree in trees:
        fn = _forward_def(tree, name)
        if fn is not None:
            out += [k for k in _keys_in(fn) if k not in out]
    return out


def regression_forward(name: str, tree: ast.Module) -> bool:
    """A forward that computes a regression loss (MSE, L1, Huber): its labels are tried as floats first."""
    fn = _forward_def(tree, name)
    return fn is not None and any(w in ast.unparse(fn) for w in _REGRESSION)


# --------------------------------------------------------------------------- values


def _role(key: str) -> str:
    k = key.lower()
    if "mask" in k:
        return "mask"
    if k in _LABEL or k.endswith(("_label", "_labels", "_target", "_targets")):
        return "label"
    if k in _LENGTH or k.endswith(("_lengths", "_lens")):
        return "length"
    return "plain"


def _options(role: str, base: torch.Tensor, floats_first: bool = False) -> list[tuple[Callable[[], torch.Tensor], str]]:
    """(maker, description) of each value tried for a key of this role, given the first layer's input `base`."""
    b = base.shape[0]
    per_pos = tuple(base.shape[:2]) if base.dim() >= 2 else (b,)

    def gen(i: int) -> torch.Generator:
        return torch.Generator().manual_seed(SEED_INPUT + 100 + i)

    if role == "mask":
        return [(lambda: torch.ones(per_pos, dtype=torch.long), f"ones {per_pos}"),
                (lambda: torch.ones(per_pos, dtype=torch.bool), f"True {per_pos}")]
    if role == "label":
        out = [(lambda: torch.randint(0, 2, (b,), generator=gen(1)), f"class indices 0/1 ({b},)")]
        if base.dim() >= 2:
            out.append((lambda: torch.randint(0, 2, per_pos, generator=gen(2)), f"class indices 0/1 {per_pos}"))
        floats = [(lambda: torch.randn((b, 1), generator=gen(4), dtype=torch.get_default_dtype()), f"floats ({b}, 1)"),
                  (lambda: torch.rand((b,), generator=gen(3), dtype=torch.get_default_dtype()).round(),
                   f"0/1 floats ({b},)")]
        return floats + out if floats_first else out + floats
    if role == "length":
        n = base.shape[1] if base.dim() >= 2 else 1
        return [(lambda: torch.full((b,), n, dtype=torch.long), f"full length {n} ({b},)")]
    return []


def dict_candidates(keys: list[str], base_makers: list[Callable[[], tuple]],
                    floats_first: bool = False) -> list[Callable[[], tuple]]:
    """Makers of `(batch,)` for each input the first layer suggests, and each combination of per-role values
    (`floats_first`: labels as floats before class indices, for a regression loss)."""
    out: list[Callable[[], tuple]] = []
    for make in base_makers:
        probe = make()[0]
        roles = [_role(k) for k in keys]
        choices = [_options(r, probe, floats_first) if r != "plain" else [(None, "")] for r in roles]
        for combo in itertools.islice(itertools.product(*choices), MAX_COMBOS):
            out.append(_maker(keys, roles, combo, make))
    return out


def _maker(keys, roles, combo, make) -> Callable[[], tuple]:
    def build() -> tuple:
        base = make()[0]
        batch, shown, plain = {}, [], 0
        for key, role, (value, desc) in zip(keys, roles, combo):
            if role == "plain":
                if plain == 0:
                    v = base
                elif base.is_floating_point():
                    g = torch.Generator().manual_seed(SEED_INPUT + plain)
                    v = torch.randn(base.shape, generator=g, dtype=base.dtype)
                else:
                    v = base.clone()
                plain += 1
                kind = "ids" if not base.is_floating_point() else "floats"
                shown.append(f"{key} {kind} {tuple(base.shape)}")
            else:
                v = value()
                shown.append(f"{key} {desc}")
            batch[key] = v
        build.note = (f"batch dict with keys {', '.join(keys)} ({'; '.join(shown)}; shapes from its first layer)")
        return (batch,)

    build.shape = getattr(make, "shape", ())  # type: ignore[attr-defined]
    build.note = ""  # type: ignore[attr-defined]
    return build


def missing_key(e: BaseException, batch: dict) -> str | None:
    """The string key a KeyError names, when the batch lacks it."""
    if isinstance(e, KeyError) and e.args and isinstance(e.args[0], str) and e.args[0] not in batch:
        return e.args[0]
    return None

