"""Static facts the rules share: imports, modules, tensors, aliases, training loops.

Rules ask questions ("is this name a tensor that autograd saved?", "which loop
calls backward?"); this package answers them once per file so every rule reads
the same facts and no rule re-walks the tree its own way.
"""

from gradfix.analysis.names import ImportMap, qualname, dotted
from gradfix.analysis.fileindex import FileIndex
from gradfix.analysis.flow import Flow, Binding, Step, Kind, TENSORISH as TENSORISH_KINDS
from gradfix.analysis import fileindex, torchapi, tree
from gradfix.analysis.loops import TrainingLoop, find_training_loops

__all__ = [
    "ImportMap", "qualname", "dotted", "FileIndex", "Flow", "Binding", "Step", "Kind",
    "TrainingLoop", "find_training_loops", "TENSORISH_KINDS", "fileindex", "torchapi", "tree",
]
