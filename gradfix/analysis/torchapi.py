"""What PyTorch operations do to autograd: which save their input or output,
which return views, which mutate in place. The measured cases live in
../shared/design/verification.md section 1.2; the rest follows each op's
derivative formula (an op needs its input saved when its derivative reads it).
"""

from __future__ import annotations

# Ops whose backward reads their OUTPUT: mutating the result in place breaks backward.
OUTPUT_SAVING_FUNCS = frozenset(
    {
        "torch.sigmoid", "torch.tanh", "torch.exp", "torch.softmax", "torch.log_softmax",
        "torch.relu", "torch.sqrt", "torch.rsqrt", "torch.reciprocal", "torch.special.expit",
        "torch.nn.functional.sigmoid", "torch.nn.functional.tanh", "torch.nn.functional.softmax",
        "torch.nn.functional.log_softmax", "torch.nn.functional.relu",
    }
)
OUTPUT_SAVING_METHODS = frozenset(
    {"sigmoid", "tanh", "exp", "softmax", "log_softmax", "relu", "sqrt", "rsqrt", "reciprocal"}
)
OUTPUT_SAVING_MODULES = frozenset(
    {"torch.nn.Sigmoid", "torch.nn.Tanh", "torch.nn.ReLU", "torch.nn.Softmax", "torch.nn.LogSoftmax"}
)
# Activations that save their result only when they run in place (out of place their backward
# reads the input): name -> position of `inplace` among the positional arguments (the functional
# forms count the input). Measured with torch 2.13 (`h = act(lin(x)); h += x; backward()`): it
# raises for ReLU and ReLU(inplace=True), LeakyReLU/ELU/CELU/SELU/RReLU with inplace=True and
# F.leaky_relu(..., inplace=True); it trains for those five out of place, for F.elu and F.relu6,
# and for ReLU6, Hardtanh, Threshold, SiLU, Hardswish and Mish even in place.
INPLACE_OUTPUT_SAVING_MODULES = {
    "torch.nn.LeakyReLU": 1, "torch.nn.ELU": 1, "torch.nn.CELU": 1, "torch.nn.SELU": 0, "torch.nn.RReLU": 2,
}
INPLACE_OUTPUT_SAVING_FUNCS = {
    "torch.nn.functional.leaky_relu": 2, "torch.nn.functional.elu": 2, "torch.nn.functional.celu": 2,
    "torch.nn.functional.selu": 1, "torch.nn.functional.rrelu": 4,
    "torch.nn.functional.leaky_relu_": -1, "torch.nn.functional.elu_": -1, "torch.nn.functional.celu_": -1,
    "torch.nn.functional.selu_": -1, "torch.nn.functional.rrelu_": -1,
}

# Ops whose backward reads their (tensor) INPUT.
INPUT_SAVING_FUNCS = frozenset(
    {
        "torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm", "torch.pow", "torch.matmul",
        "torch.mm", "torch.bmm", "torch.mv", "torch.dot", "torch.einsum", "torch.log", "torch.abs",
        "torch.clamp", "torch.clip", "torch.sin", "torch.cos", "torch.prod", "torch.square",
        "torch.nn.functional.normalize", "torch.nn.functional.linear", "torch.nn.functional.conv1d",
        "torch.nn.functional.conv2d", "torch.nn.functional.conv3d", "torch.nn.functional.gelu",
        "torch.nn.functional.silu", "torch.nn.functional.leaky_relu", "torch.nn.functional.layer_norm",
        "torch.nn.functional.cosine_similarity", "torch.cdist",
    }
)
INPUT_SAVING_METHODS = frozenset(
    {"norm", "pow", "matmul", "mm", "bmm", "mv", "dot", "log", "abs", "clamp", "clip", "sin", "cos", "prod", "square", "std", "var"}
)
# Tensor-tensor binary methods that save their receiver when the other side is a tensor.
BINARY_SAVING_METHODS = frozenset({"mul", "div", "multiply", "divide"})
INPUT_SAVING_MODULES = frozenset(
    {
        "torch.nn.Linear", "torch.nn.Bilinear", "torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d",
        "torch.nn.ConvTranspose1d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d",
        "torch.nn.LayerNorm", "torch.nn.GroupNorm", "torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d",
        "torch.nn.BatchNorm3d", "torch.nn.GELU", "torch.nn.SiLU", "torch.nn.LeakyReLU", "torch.nn.PReLU",
    }
)

# torch.nn modules with no parameters: their output requires grad only when their input does.
PARAMETER_FREE_MODULES = frozenset(
    "torch.nn." + n for n in (
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
        "Softmax", "Softmax2d", "LogSoftmax", "Softmin", "Softplus", "Softsign", "Softshrink", "Hardtanh",
        "Hardswish", "Hardsigmoid", "Hardshrink", "Tanhshrink", "LogSigmoid", "Threshold", "GLU",
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
        "LPPool1d", "LPPool2d", "FractionalMaxPool2d", "Identity", "Flatten", "Unflatten", "Upsample",
        "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
        "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
        "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
        "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "CosineSimilarity",
        "PairwiseDistance", "Fold", "Unfold",
    )
)


# Functions that create a tensor from scratch (a superset of params.FACTORIES, the ones a rewrite may
# add `device=` to): the result requires grad only with `requires_grad=True`.
TENSOR_FACTORIES = frozenset(
    "torch." + n for n in (
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "arange", "range", "linspace",
        "logspace", "eye", "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
        "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "tril_indices", "triu_indices", "meshgrid", "LongTensor", "FloatTensor", "Tensor", "BoolTensor",
        "IntTensor", "ByteTensor", "DoubleTensor", "HalfTensor", "hann_window", "hamming_window",
        "empty_strided", "frombuffer", "polar", "complex",
    )
) - {"torch.normal", "torch.polar", "torch.complex"}  # normal(mean_tensor, std) follows its arguments
# Ops whose result never requires grad (integer, boolean or index results, or cut from the graph).
NON_DIFFERENTIABLE_FUNCS = frozenset(
    "torch." + n for n in (
        "argmax", "argmin", "argsort", "argwhere", "nonzero", "where_indices", "eq", "ne", "lt", "le", "gt", "ge",
        "isnan", "isinf", "isfinite", "isclose", "equal", "allclose", "sign", "floor", "ceil", "round", "trunc",
        "bucketize", "searchsorted", "unique", "unique_consecutive", "bincount", "histc", "count_nonzero",
        "logical_and", "logical_or", "logical_not", "logical_xor", "numel", "is_tensor", "is_floating_point",
    )
)
NON_DIFFERENTIABLE_METHODS = frozenset(
    {"detach", "detach_", "item", "tolist", "numpy", "long", "int", "bool", "byte", "short", "char",
     "argmax", "argmin", "argsort", "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
     "isfinite", "sign", "floor", "ceil", "round", "trunc", "size", "dim", "numel", "nelement", "stride",
     "data_ptr", "element_size", "is_contiguous", "get_device", "unique", "bincount", "count_nonzero",
     "logical_not", "logical_and", "logical_or", "all", "any", "type"}
)
# Ops whose result has an integer or boolean dtype (or is cut from the graph), whatever their inputs: such a
# tensor can never require grad, so it holds no autograd graph. Stricter than NON_DIFFERENTIABLE_*: `round`,
# `sign`, `floor` return float tensors that keep a grad_fn (of zero gradient), and `type(...)` keeps the graph.
INTEGER_RESULT_FUNCS = frozenset(
    "torch." + n for n in (
        "argmax", "argmin", "argsort", "argwhere", "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "greater",
        "less", "greater_equal", "less_equal", "not_equal", "isnan", "isinf", "isfinite", "isclose",
        "bucketize", "searchsorted", "count_nonzero", "logical_and", "logical_or", "logical_not", "logical_xor",
    )
)
INTEGER_RESULT_METHODS = frozenset(
    {"detach", "item", "tolist", "long", "int", "bool", "byte", "short", "char", "argmax", "argmin", "argsort",
     "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal",
     "isnan", "isinf", "isfinite", "isclose", "count_nonzero", "logical_not", "logical_and", "logical_or",
     "logical_xor", "all", "any"}
)
# Ops returning a (values, indices) pair: `[1]` / `.indices` is an integer tensor. max / min / median / mode
# return the pair only when given a dimension (`torch.max(a, b)` of two tensors is elementwise).
PAIR_RETURNING_ALWAYS = frozenset({"topk", "sort", "kthvalue", "mode", "cummax", "cummin"})
PAIR_RETURNING_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
# Methods (and `torch.` functions of the same name, the tensor first) whose result holds a graph only when
# the tensor does: dtype and device moves, shape changes, reductions. Their other arguments are sizes,
# dimensions, dtypes or devices (`x.to(y)` takes y's dtype and device, not its graph).
GRAPH_FOLLOWS_RECEIVER = frozenset(
    {"float", "double", "half", "bfloat16", "cpu", "cuda", "to", "type_as", "view", "view_as", "reshape",
     "reshape_as", "squeeze", "unsqueeze", "flatten", "contiguous", "clone", "t", "sum", "mean", "nansum",
     "nanmean", "numpy", "permute", "transpose"}
)
# Methods returning a tensor that shares storage (and the version counter) with the receiver.
VIEW_METHODS = frozenset(
    {
        "detach", "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "expand",
        "expand_as", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select", "diagonal",
        "as_strided", "unfold", "contiguous", "movedim", "swapaxes", "swapdims", "mT", "T",
    }
)
# Functions returning several views of one tensor: autograd refuses an in-place op on any of them
# ("Output 1 of Split is a view and is being modified inplace ... returns multiple views") when the
# view requires grad, in the forward pass (measured with torch 2.13: chunk, split and unbind raise;
# tensor_split does not and is not listed).
MULTI_VIEW_METHODS = frozenset({"chunk", "split", "unbind", "split_with_sizes"})
MULTI_VIEW_FUNCS = frozenset({"torch.chunk", "torch.split", "torch.unbind"})
# On CPU these alias too (.cpu() of a CPU tensor, .numpy()); hazards.md: "real aliases".
MAYBE_ALIAS_METHODS = frozenset({"cpu", "numpy", "to", "type_as", "float", "double", "half"})
VIEW_ATTRIBUTES = frozenset({"data", "T", "mT", "H", "real", "imag"})

# In-place tensor methods and their out-of-place twins (same arguments).
INPLACE_METHODS = {
    "div_": "div", "mul_": "mul", "add_": "add", "sub_": "sub", "clamp_": "clamp", "clip_": "clip",
    "clamp_min_": "clamp_min", "clamp_max_": "clamp_max", "pow_": "pow", "exp_": "exp",
    "sigmoid_": "sigmoid", "tanh_": "tanh", "relu_": "relu", "neg_": "neg", "abs_": "abs",
    "sqrt_": "sqrt", "rsqrt_": "rsqrt", "log_": "log", "square_": "square", "true_divide_": "true_divide",
    "masked_fill_": "masked_fill", "addcmul_": "addcmul", "addcdiv_": "addcdiv", "lerp_": "lerp",
    "nan_to_num_": "nan_to_num", "reciprocal_": "reciprocal", "sin_": "sin", "cos_": "cos",
    "floor_": "floor", "ceil_": "ceil", "round_": "round", "renorm_": "renorm", "fill_": None,
    "zero_": None, "copy_": None, "normal_": None, "uniform_": None, "scatter_": "scatter",
    "index_fill_": "index_fill", "index_add_": "index_add", "masked_scatter_": "masked_scatter",
    "softmax_": None,
}
# Trailing-underscore methods that do not write tensor data.
NON_MUTATING_UNDERSCORE = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "set_", "resize_"})

# Methods that leave the tensor world (results are Python values or NumPy arrays).
NON_TENSOR_METHODS = frozenset(
    {"item", "tolist", "size", "dim", "numel", "stride", "data_ptr", "element_size", "is_contiguous",
     "backward", "register_hook", "retain_grad", "__len__", "nelement", "get_device", "storage"}
)

OPTIMIZER_PREFIXES = ("torch.optim.", "apex.optimizers.", "bitsandbytes.optim.", "transformers.AdamW")
SCHEDULER_PREFIXES = ("torch.optim.lr_scheduler.",)
NO_GRAD_CONTEXTS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
     "torch.autograd.inference_mode"}
)


# activation and dropout modules that can run in place: the position of `inplace` in the constructor
INPLACE_MODULE_POSITION = {
    "ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Mish": 0, "Hardswish": 0, "Hardsigmoid": 0,
    "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "AlphaDropout": 1, "FeatureAlphaDropout": 1,
    "LeakyReLU": 1, "ELU": 1, "CELU": 1, "Threshold": 2, "Hardtanh": 2,
}
# their functional forms (torch.nn.functional.<name>): the position of `inplace` in the call
INPLACE_FUNCTIONAL_POSITION = {
    "relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1, "hardsigmoid": 1, "elu": 2,
    "celu": 2, "leaky_relu": 2, "dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3,
    "alpha_dropout": 3, "threshold": 3, "hardtanh": 3,
}


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.endswith("__") and name not in NON_MUTATING_UNDERSCORE


def is_torch_func(q: str | None) -> bool:
    return bool(q) and (q == "torch" or q.startswith("torch."))


# Functions that take a module and return it (or a wrapper of it): reparametrisations and
# pruning return the same module; scripting, tracing and compiling return one that stands in
# for it when given a module (given a function, they return a function).
# methods that return the module they are called on (`Ctor(...).cuda().train()` is the Ctor's module)
MODULE_MOVES = frozenset({"cuda", "to", "train", "eval", "double", "float", "half", "cpu", "requires_grad_"})

MODULE_RETURNING = frozenset(
    {
        "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
        "torch.nn.utils.remove_weight_norm", "torch.nn.utils.remove_spectral_norm",
        "torch.nn.utils.weight_norm.weight_norm", "torch.nn.utils.spectral_norm.spectral_norm",
        "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm",
        "torch.nn.utils.parametrizations.orthogonal", "torch.nn.utils.parametrize.register_parametrization",
        "torch.nn.utils.prune.identity", "torch.nn.utils.prune.random_unstructured",
        "torch.nn.utils.prune.l1_unstructured", "torch.nn.utils.prune.random_structured",
        "torch.nn.utils.prune.ln_structured", "torch.nn.utils.prune.custom_from_mask", "torch.nn.utils.prune.remove",
    }
)
MODULE_IF_GIVEN_ONE = frozenset({
    "torch.jit.script", "torch.jit.trace", "torch.compile",
    # returns the module it is given, its BatchNorm layers replaced
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm", "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
})


def is_nn_module_ctor(q: str | None) -> bool:
    """`torch.nn.Linear`, `torch.nn.modules.conv.Conv2d`, torchvision models: constructors of modules."""
    if not q:
        return False
    last = q.rsplit(".", 1)[-1]
    if q.startswith("torch.nn.") and not q.startswith("torch.nn.functional") and not q.startswith("torch.nn.init") \
            and not q.startswith("torch.nn.utils") and last[:1].isupper():
        return not q.startswith("torch.nn.Parameter")
    return q.startswith("torchvision.models.")

# torch.nn modules that create trainable parameters with their default arguments: one built and called in the
# same expression (`nn.Linear(8, 4)(x)` in `forward`) trains nothing and draws fresh weights on every call.
PARAMETRIC_MODULES = frozenset("torch.nn." + n for n in (
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "PReLU", "TransformerEncoderLayer",
    "TransformerDecoderLayer", "Transformer",
))
