"""Static facts the rules share: imports, modules, tensors, aliases, training loops.

Rules ask questions ("is this name a tensor that autograd saved?", "which loop
calls backward?"); this package answers them once per file so every rule reads
the same facts and no rule re-walks the tree its own way.
"""

import importlib

# loaded on first use (PEP 562): the project index (analysis/project.py) is read by a warm
# `check` that analyses nothing, and FileIndex, Flow and the loops load libcst
_EXPORTS = {
    "ImportMap": ("names", "ImportMap"), "qualname": ("names", "qualname"), "dotted": ("names", "dotted"),
    "FileIndex": ("fileindex", "FileIndex"),
    "Flow": ("flow", "Flow"), "Binding": ("flow", "Binding"), "Step": ("flow", "Step"), "Kind": ("flow", "Kind"),
    "TENSORISH_KINDS": ("flow", "TENSORISH"),
    "TrainingLoop": ("loops", "TrainingLoop"), "find_training_loops": ("loops", "find_training_loops"),
    "fileindex": ("fileindex", None), "torchapi": ("torchapi", None), "tree": ("tree", None),
}


def __getattr__(name):
    hit = _EXPORTS.get(name)
    if hit is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{hit[0]}")
    value = module if hit[1] is None else getattr(module, hit[1])
    globals()[name] = value
    return value


__all__ = [
    "ImportMap", "qualname", "dotted", "FileIndex", "Flow", "Binding", "Step", "Kind",
    "TrainingLoop", "find_training_loops", "TENSORISH_KINDS", "fileindex", "torchapi", "tree",
]
