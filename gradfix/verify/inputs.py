"""Inferring a unit's input from its first known layer (see verification.md, Input inference)."""
from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from typing import Callable

import torch
import torch.nn as nn

from .runtime import BATCH, SEED_INPUT, SEED_RUN, Untestable, _RetryFp32, fmt_exc, is_dtype_error, seeded
from .context import fixture_hint


def _leaf(x, dtype: torch.dtype):
    if torch.is_tensor(x) and x.is_floating_point():
        return x.detach().to(dtype).clone().requires_grad_(True)
    if torch.is_tensor(x):
        return x.detach().clone()
    return x


def make_leaves(inputs: tuple, dtype: torch.dtype) -> list:
    # a dict batch's float values are leaves too, so their gradients are compared like a tensor input's
    return [{k: _leaf(v, dtype) for k, v in x.items()} if type(x) is dict else _leaf(x, dtype) for x in inputs]


def input_leaves(leaves: list) -> list:
    """The input tensors that require grad, a dict batch's values included (in key order)."""
    out = []
    for x in leaves:
        for t in (x.values() if type(x) is dict else (x,)):
            if torch.is_tensor(t) and t.requires_grad:
                out.append(t)
    return out


def _fresh(x):
    return x.clone() if torch.is_tensor(x) else copy.deepcopy(x)


def _fresh_inputs(leaves: list) -> list:
    # A fresh non-leaf clone per run: in-place ops on the input are legal and never shared.
    return [{k: _fresh(v) for k, v in x.items()} if type(x) is dict else _fresh(x) for x in leaves]


# Batch sizes tried after the first when a changed line did not run (`if x.shape[0] > 64:`, a
# single-sample path); eval and train mode are always both run.
OTHER_BATCHES = (128, 1)


def rebatch(inputs: tuple, n: int) -> tuple | None:
    """`inputs` with the leading (batch) dimension resized to `n`: new seeded values, of the same
    dtype and value range; None when no input has a batch dimension to resize."""
    if len(inputs) == 1 and type(inputs[0]) is dict:  # a dict batch: its values
        alt = rebatch(tuple(inputs[0].values()), n)
        return None if alt is None else (dict(zip(inputs[0], alt)),)
    tensors = [x for x in inputs if torch.is_tensor(x) and x.dim() >= 2]
    if not tensors:
        return None
    b = tensors[0].shape[0]
    if b == n:
        return None
    g = torch.Generator().manual_seed(SEED_INPUT + n)
    out = []
    for x in inputs:
        if not (torch.is_tensor(x) and x.dim() >= 1 and x.shape[0] == b and (x.dim() >= 2 or x is not tensors[0])):
            out.append(x)
            continue
        shape = (n, *x.shape[1:])
        if x.is_floating_point():
            out.append(torch.randn(shape, generator=g, dtype=x.dtype))
        elif x.dtype == torch.bool:
            out.append(torch.rand(shape, generator=g) > 0.5)
        else:
            lo, hi = (int(x.min()), int(x.max())) if x.numel() else (0, 1)
            out.append(torch.randint(lo, hi + 1, shape, generator=g, dtype=x.dtype))
    return tuple(out)



# --------------------------------------------------------------------------- input inference

_CONV_SIZES = {1: (32, 28, 64, 16, 8, 224, 128), 2: (32, 28, 64, 16, 8, 224), 3: (16, 8, 32)}


def _first_known_leaf(model: nn.Module) -> nn.Module | None:
    for m in model.modules():
        if any(True for _ in m.children()):
            continue
        if isinstance(m, (nn.modules.conv._ConvNd, nn.Linear, nn.Embedding, nn.EmbeddingBag, nn.RNNBase)):
            return m
    return None


def _pool_lengths(model: nn.Module | None, leaf: nn.Module) -> list[tuple[int, str]]:
    """Sequence lengths a model of token ids says through a 1-d pooling layer registered after its embedding: a
    sentence classifier pools the whole sentence with `nn.AvgPool1d(sentence_length)` (then squeezes the length of
    1 away), so only ids of that length reach its head with the shape it takes. (kernel size, the layer), distinct,
    in registration order, at most 3."""
    if model is None:
        return []
    out: list[tuple[int, str]] = []
    after = False
    for m in model.modules():
        if m is leaf:
            after = True
            continue
        if not (after and isinstance(m, (nn.AvgPool1d, nn.MaxPool1d, nn.LPPool1d))):
            continue
        k = m.kernel_size
        k = k[0] if isinstance(k, tuple) and len(k) == 1 else k
        if isinstance(k, int) and not isinstance(k, bool) and 1 < k <= 4096 and k != 16 \
                and k not in [x for x, _ in out]:
            out.append((k, f"{type(m).__name__}({k})"))
    return out[:3]


def _candidate_inputs(leaf: nn.Module, dtype: torch.dtype, model: nn.Module | None = None) -> list[Callable[[], tuple]]:
    """Input makers (lazy: a 224x224 candidate is only built when the smaller ones failed). `model`: the unit, for
    an embedding's sequence length (`_pool_lengths`)."""

    def rn(*shape: int) -> Callable[[], tuple]:
        def make() -> tuple:
            g = torch.Generator().manual_seed(SEED_INPUT)
            return (torch.randn(shape, generator=g, dtype=dtype),)

        make.shape = shape  # type: ignore[attr-defined]
        return make

    out: list[Callable[[], tuple]] = []
    if isinstance(leaf, nn.modules.conv._ConvNd):
        dims = len(leaf.kernel_size)
        chans = (leaf.in_channels,) if leaf.in_channels else (3, 1)
        for c in chans:
            for s in _CONV_SIZES.get(dims, (16,)):
                out.append(rn(BATCH, c, *([s] * dims)))
    elif isinstance(leaf, nn.Linear):
        feats = (leaf.in_features,) if leaf.in_features else (16, 32, 8, 64, 3)
        for f in feats:
            out.append(rn(BATCH, f))
            out.append(rn(BATCH, 8, f))
    elif isinstance(leaf, (nn.Embedding, nn.EmbeddingBag)):
        n = leaf.num_embeddings

        def ids(length: int, note: str = "") -> Callable[[], tuple]:
            def make_ids() -> tuple:
                g = torch.Generator().manual_seed(SEED_INPUT)
                return (torch.randint(0, n, (BATCH, length), generator=g),)

            make_ids.shape = (BATCH, length)  # type: ignore[attr-defined]
            if note:
                make_ids.note = note  # type: ignore[attr-defined]
            return make_ids

        out.append(ids(16))
        for k, pool in _pool_lengths(model, leaf):
            out.append(ids(k, f"token ids of shape {(BATCH, k)}: the sequence length is the kernel size of the "
                              f"{pool} applied after the embedding (a pool over the whole sentence)"))
    elif isinstance(leaf, nn.RNNBase):
        if leaf.batch_first:
            out.append(rn(BATCH, 8, leaf.input_size))
        else:
            out.append(rn(8, BATCH, leaf.input_size))
    return out


def _view_candidates(model: nn.Module, dtype: torch.dtype) -> list[Callable[[], tuple]]:
    """An input shaped as forward's first reshape of its argument says: `x.view(-1, 1, 185, 95)` (every size an int
    literal, at most one -1, taken as the batch) gives (4, 1, 185, 95). Tried after the first layer's candidates;
    the check still needs forward to run on it, nothing else is assumed of it."""
    forward = type(model).forward
    try:
        fn = ast.parse(textwrap.dedent(inspect.getsource(forward))).body[0]
        names = forward.__code__.co_varnames[:forward.__code__.co_argcount]
    except (OSError, TypeError, SyntaxError, IndexError, AttributeError):
        return []
    if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "forward" and len(names) >= 2
            and tuple(a.arg for a in fn.args.args) == tuple(names)):
        return []  # the text read back is not this forward's (a file changed on disk, a notebook)
    arg = fn.args.args[1].arg
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("view", "reshape") and isinstance(n.func.value, ast.Name)
             and n.func.value.id == arg and not n.keywords]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset))[:1]:
        sizes = list(call.args)
        if len(sizes) == 1 and isinstance(sizes[0], ast.Tuple):
            sizes = sizes[0].elts
        try:
            dims = [ast.literal_eval(a) for a in sizes]
        except (ValueError, TypeError, SyntaxError):
            return []
        if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1) for d in dims):
            return []
        if dims.count(-1) > 1 or (-1 in dims and dims[0] != -1):
            return []
        shape = tuple(BATCH if d == -1 else d for d in dims)
        if len(shape) < 2 or int(torch.Size(shape).numel()) > 4_000_000:
            return []

        def make(shape=shape) -> tuple:
            g = torch.Generator().manual_seed(SEED_INPUT)
            return (torch.randn(shape, generator=g, dtype=dtype),)

        make.shape = shape  # type: ignore[attr-defined]
        make.note = f"shaped {shape} as forward's `{ast.unparse(call)}` reads it"  # type: ignore[attr-defined]
        return [make]
    return []


def required_params(fn: Callable, skip_first: bool) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    ps = list(sig.parameters.values())
    if skip_first and ps:
        ps = ps[1:]
    return [
        p.name
        for p in ps
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
    ]


def infer_input(name: str, models: list[nn.Module], dtype: torch.dtype,
                explain: Callable[[BaseException, str], str] | None = None,
                batch_keys: list[str] | None = None, notes: dict | None = None, floats_first: bool = False) -> tuple:
    """`batch_keys`: the string keys a one-argument forward reads (batches.py): a dict batch is built;
    `notes["input"]` then says what it holds."""
    req = required_params(type(models[0]).forward, skip_first=True)
    if len(req) == 0:
        return ()
    leaf = _first_known_leaf(models[0])
    free = _parameter_free_candidates(models[0], dtype, len(req)) if leaf is None else []
    if leaf is None and not free:
        raise Untestable(
            f"input shape unknown for {name}: it has no Conv/Linear/Embedding/RNN layer to infer the input from; "
            + fixture_hint(name)
        )
    from .batches import dict_candidates, missing_key

    base = _candidate_inputs(leaf, dtype, models[0]) if leaf is not None else free
    if len(req) == 1 and leaf is not None:
        base = base + _view_candidates(models[0], dtype)
    cands = base
    keys = list(batch_keys or []) if len(req) == 1 and leaf is not None else []
    dict_mode = bool(keys)
    if dict_mode:
        cands = dict_candidates(keys, base, floats_first)
    if leaf is None:
        batch_keys = None  # no dict batches for a module with no layer: only the plain float inputs
    elif len(req) > 1:
        # `forward(self, q, k, v)`, `forward(self, x, y)`: try every argument shaped like the first
        # layer's input (distinct values); masks, lengths and the like need a fixture
        cands = [_replicated(make, len(req)) for make in cands] + _split_candidates(leaf, dtype, len(req))
        if len(req) == 2:
            cands += _hidden_candidates(models[0], base, dtype)
        cands += [_joined(make, len(req), w, dtype) for w in _joined_widths(models[0]) + _side_widths(models[0])
                  for make in base if len(getattr(make, "shape", ())) == 2]
    last: BaseException | None = None
    saw_dtype = False
    i = 0
    while i < len(cands) or (not dict_mode and batch_keys is not None and len(req) == 1
                             and _reads_string_key(models[0])):
        if i >= len(cands):
            # forward indexes its argument with a string the source read did not show (a helper reads it):
            # a dict batch, its keys found from the KeyErrors
            dict_mode, cands, i = True, dict_candidates(keys, base, floats_first), 0
        make = cands[i]
        i += 1
        cand = make()
        for model in models:
            try:
                try:
                    m = copy.deepcopy(model)
                except Exception:  # noqa: BLE001 - hook-based weight_norm holds a computed weight deepcopy refuses
                    m = model      # a no_grad forward in eval mode leaves it as it was (its mode is restored)
                was = m.training
                try:
                    m.eval()
                    try:
                        with torch.no_grad(), seeded(SEED_RUN):
                            m(*_fresh_inputs(list(cand)))
                    except RuntimeError as e:
                        if not _needs_grad_mode(e):
                            raise
                        # forward takes autograd.grad itself (a flow's log-det, an energy's score): not a shape error
                        with torch.enable_grad(), seeded(SEED_RUN):
                            m(*[x.clone().requires_grad_() if torch.is_tensor(x) and x.is_floating_point() else x
                                for x in _fresh_inputs(list(cand))])  # as the check's leaves are
                finally:
                    m.train(was)
                if (dict_mode or getattr(make, "note", "")) and notes is not None:
                    notes["input"] = make.note
                return cand
            except Exception as e:  # noqa: BLE001 - user code
                if last is None or model is models[0]:
                    last = e
                # the forward makes float32 tensors of its own on the input it fits (`x.to(torch.float32)`), and
                # other shapes fail for their size (a mask built for 28x28): it runs in fp32, not in no shape
                saw_dtype = saw_dtype or (model is models[0] and is_dtype_error(e))
                if dict_mode and len(keys) < 12 and model is models[0]:
                    extra = missing_key(e, cand[0])
                    if extra is not None:  # a key the static read missed: start over with it
                        keys.append(extra)
                        cands, i = dict_candidates(keys, base, floats_first), 0
                        break
    if last is not None and dtype == torch.float64 and (saw_dtype or is_dtype_error(last)):
        raise _RetryFp32()
    if last is not None and explain is not None and isinstance(last, NameError):
        why = explain(last, name)
        if why != fmt_exc(last):
            raise Untestable(why)
    tried = "; ".join(str(tuple(getattr(c, "shape", ()))) for c in cands[:8])
    each = (f"forward() takes {len(req)} arguments ({', '.join(req)}), each tried with the shape inferred from its "
            f"first layer" if len(req) > 1 else "forward failed on every input inferred from its first layer")
    if dict_mode:
        each = (f"forward reads a batch dict (keys {', '.join(keys)}); every combination of values tried (the first "
                f"layer's input, masks, class indices, floats) failed, with values shaped from its first layer")
    if leaf is None:
        each = (f"it has no Conv/Linear/Embedding/RNN layer to infer the input from, and forward() failed on "
                f"plain float inputs ({len(req)} of each shape)")
    raise Untestable(
        f"input shape unknown for {name}: {each}{'' if leaf is None else ' ' + type(leaf).__name__} "
        f"(tried {tried}; last error "
        f"{fmt_exc(last) if last else 'none'}); " + fixture_hint(name)
    )


def _reads_string_key(model: nn.Module) -> bool:
    """Does forward, given an empty dict, ask it for a string key (`batch["tokens"]` in a helper it calls)?"""
    from .batches import missing_key

    try:
        m = copy.deepcopy(model)
    except Exception:  # noqa: BLE001
        m = model
    was = m.training
    try:
        m.eval()
        with torch.no_grad(), seeded(SEED_RUN):
            m({})
    except Exception as e:  # noqa: BLE001 - user code
        return missing_key(e, {}) is not None
    finally:
        m.train(was)
    return False


def _parameter_free_candidates(model: nn.Module, dtype: torch.dtype, count: int) -> list[Callable[[], tuple]]:
    """A module with no parameters, buffers or submodules (nn.CosineSimilarity, nn.PairwiseDistance, a distance or
    pooling module of the project's own) has no layer to infer its input from, and no learned shape it could
    need: `count` (at most 3) float inputs of a few plain shapes, each with distinct values; the verdict's detail
    says which one ran. Any other module without a known layer still needs a fixture."""
    if not 1 <= count <= 3 or any(True for _ in model.children()) or any(True for _ in model.parameters()) \
            or any(True for _ in model.buffers()):
        return []
    out: list[Callable[[], tuple]] = []
    for shape in ((BATCH, 16), (BATCH, 8, 16), (BATCH, 3, 16, 16)):
        def make(shape=shape) -> tuple:
            g = torch.Generator().manual_seed(SEED_INPUT)
            return (torch.randn(shape, generator=g, dtype=dtype),)

        make.shape = shape  # type: ignore[attr-defined]
        multi = _replicated(make, count)
        multi.note = (f"{count} float input{'s' if count > 1 else ''} of shape {shape} (distinct values): "  # type: ignore[attr-defined]
                      f"{type(model).__name__} has no parameters, buffers or layers to infer the shape from")
        out.append(multi)
    return out


def _split_candidates(leaf: nn.Module, dtype: torch.dtype, count: int) -> list[Callable[[], tuple]]:
    """For a forward of `count` tensors that it concatenates before its first layer (`torch.cat((d0, d1, d0 - d1),
    dim=1)` into a Conv2d of 5 channels, an LPIPS-style head): every argument with a share of the layer's channels
    (or features), `in // count` when it divides, then 1; values drawn from a normal, then from [0, 1) (distances,
    probabilities: a BCE target made from an argument needs them). Tried only after the full-width inputs failed."""
    if isinstance(leaf, nn.modules.conv._ConvNd):
        width, dims = leaf.in_channels, len(leaf.kernel_size)
        sizes = _CONV_SIZES.get(dims, (16,))[:3]
    elif isinstance(leaf, nn.Linear):
        width, dims, sizes = leaf.in_features, 0, (None,)
    else:
        return []
    shares = [w for w in ((width // count) if width % count == 0 else 0, 1) if 0 < w < width]
    out: list[Callable[[], tuple]] = []
    for uniform in (False, True):
        for w in dict.fromkeys(shares):
            for s in sizes:
                shape = (BATCH, w, *([s] * dims)) if dims else (BATCH, w)

                def make(shape=shape, uniform=uniform) -> tuple:
                    draw = torch.rand if uniform else torch.randn
                    return tuple(draw(shape, generator=torch.Generator().manual_seed(SEED_INPUT + i), dtype=dtype)
                                 for i in range(count))

                make.shape = shape  # type: ignore[attr-defined]
                make.note = (f"{count} tensors of shape {shape}, drawn from {'[0, 1)' if uniform else 'a normal'} "  # type: ignore[attr-defined]
                             f"(a share of the {width} {'channels' if dims else 'features'} of its first layer "
                             f"{type(leaf).__name__}, as when forward concatenates them)")
                out.append(make)
    return out


def _hidden_candidates(model: nn.Module, base: list, dtype: torch.dtype) -> list[Callable[[], tuple]]:
    """For `forward(self, input, hidden)` of a model holding one recurrent layer (a decoder step): the first layer's
    input, then the layer's initial state, (num_layers * directions, batch, hidden_size) as torch documents it for
    the batch-first and the sequence-first layout alike; for an LSTM both the state tensor alone (a forward that
    makes the cell state itself) and the (h, c) pair. Tried after the inputs shaped like the first one."""
    rnns = [m for m in model.modules() if isinstance(m, nn.RNNBase)]
    if len(rnns) != 1:
        return []
    r = rnns[0]
    shape = (r.num_layers * (2 if r.bidirectional else 1), BATCH, r.proj_size or r.hidden_size)
    cell = (r.num_layers * (2 if r.bidirectional else 1), BATCH, r.hidden_size)
    out: list[Callable[[], tuple]] = []
    for make in base[:2]:
        for pair in ((False, True) if isinstance(r, nn.LSTM) else (False,)):
            def multi(make=make, pair=pair) -> tuple:
                first = make()[0]
                g = torch.Generator().manual_seed(SEED_INPUT + 1)
                h = torch.randn(shape, generator=g, dtype=dtype)
                return (first, (h, torch.randn(cell, generator=g, dtype=dtype)) if pair else h)

            multi.shape = (*getattr(make, "shape", ()), "+", shape)  # type: ignore[attr-defined]
            multi.note = (f"{tuple(getattr(make, 'shape', ()))} for the first argument, and the initial state of its "  # type: ignore[attr-defined]
                          f"{type(r).__name__} for the second ({'an (h, c) pair of ' if pair else ''}shape {shape})")
            out.append(multi)
    return out


def _replicated(make: Callable[[], tuple], count: int) -> Callable[[], tuple]:
    """`count` inputs shaped like `make`'s one: the first is its, the others drawn with other seeds."""

    def multi() -> tuple:
        first = make()[0]
        others = []
        for i in range(1, count):
            if first.is_floating_point():
                g = torch.Generator().manual_seed(SEED_INPUT + i)
                others.append(torch.randn(first.shape, generator=g, dtype=first.dtype))
            else:
                others.append(first.clone())
        return (first, *others)

    multi.shape = getattr(make, "shape", ())  # type: ignore[attr-defined]
    return multi


def _joined_widths(model: nn.Module) -> list[int]:
    """Widths of an input that forward joins to the first one's features after a layer: a Linear's in_features
    beyond the out_features of the Linear before it (a critic's `nn.Linear(1024 + action_dim, 512)` after
    `nn.Linear(obs_dim, 1024)`, `forward(self, x, a)` doing `torch.cat([x, a], 1)`)."""
    lins = [m for m in model.modules() if isinstance(m, nn.Linear)]
    out: list[int] = []
    for before, after in zip(lins, lins[1:]):
        d = after.in_features - before.out_features
        if d > 0 and d not in out:
            out.append(d)
    return out[:3]


def _side_widths(model: nn.Module) -> list[int]:
    """Widths of an input that forward gives a layer of its own: a later Linear whose in_features no earlier
    Linear's out_features (nor the first's in_features) can feed (a critic's `nn.Linear(n_actions, 300)` for the
    action beside `nn.Linear(obs_dim, 400)` for the state, `forward(self, state, action)`)."""
    lins = [m for m in model.modules() if isinstance(m, nn.Linear)]
    out: list[int] = []
    for i, lin in enumerate(lins[1:], 1):
        w = lin.in_features
        if w != lins[0].in_features and all(w != x.out_features for x in lins[:i]) and w not in out:
            out.append(w)
    return out[:3]


def _joined(make: Callable[[], tuple], count: int, width: int, dtype: torch.dtype) -> Callable[[], tuple]:
    """The first input shaped like `make`'s (batch, features), the `count - 1` others (batch, width): features in
    the first's dtype, or in `dtype` when the first holds token ids (an embedding's integer input)."""

    def multi() -> tuple:
        first = make()[0]
        others = []
        feats = first.dtype if first.is_floating_point() else dtype
        for i in range(1, count):
            g = torch.Generator().manual_seed(SEED_INPUT + i)
            others.append(torch.randn((first.shape[0], width), generator=g, dtype=feats))
        return (first, *others)

    multi.shape = (*getattr(make, "shape", ()), "+", (BATCH, width))  # type: ignore[attr-defined]
    return multi


def _needs_grad_mode(e: BaseException) -> bool:
    """The error autograd raises for `autograd.grad` / `backward` of a value made under `no_grad`."""
    text = str(e)
    return "does not require grad" in text or "does not have a grad_fn" in text


def has_lazy(model: nn.Module) -> bool:
    from torch.nn.parameter import is_lazy

    return any(is_lazy(p) for p in model.parameters()) or any(is_lazy(b) for b in model.buffers())


