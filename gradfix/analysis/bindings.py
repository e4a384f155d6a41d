"""What the flow pass records: the kind of each name's value, the binding itself, and the steps.

A binding is one assignment of a name (or a function parameter).  Aliases point at the binding whose storage
they share, so "does this mutation reach a saved tensor" is a walk to the root.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import libcst as cst

from gradfix.analysis.provenance import NO, UNKNOWN, Grad


class Kind(enum.Enum):
    TENSOR = "tensor"
    NUMPY = "numpy"
    NUMBER = "number"
    MODULE = "module"
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    SCALER = "scaler"
    PARAMETER = "parameter"
    OTHER = "other"
    UNKNOWN = "unknown"


TENSORISH = (Kind.TENSOR, Kind.PARAMETER)


@dataclass(eq=False)
class Step:
    """One small statement (or a compound statement's header) in evaluation order."""

    index: int
    node: cst.CSTNode
    line: cst.CSTNode            # the SimpleStatementLine or compound statement holding it
    no_grad: bool
    loops: tuple                 # enclosing For/While nodes inside this scope, outermost first
    branch: tuple = ()           # (id of an if/elif chain, which branch) for each enclosing branch


@dataclass(eq=False)
class Binding:
    name: str
    kind: Kind
    step: int                    # -1 for function parameters
    value: cst.CSTNode | None
    saved_output: bool = False   # bound from an op whose backward reads its output
    alias_of: "Binding | None" = None
    alias_how: str = ""          # "detach", "view", "assignment", ...
    no_grad: bool = False
    ctor: str | None = None      # constructor qualname for modules, optimizers, schedulers
    is_param: bool = False
    reads: list[int] = field(default_factory=list)
    saved_at: list[tuple[int, object, Grad]] = field(default_factory=list)  # (step, why, saved if this requires grad)
    escapes: list[tuple[int, str]] = field(default_factory=list)
    mutations: list[tuple[int, cst.CSTNode]] = field(default_factory=list)
    grad: Grad = UNKNOWN         # may it require grad (provenance.py)
    saved_output_if: Grad = NO   # with saved_output: saved only when this requires grad

    def root(self) -> "Binding":
        b = self
        seen = set()
        while b.alias_of is not None and id(b) not in seen:
            seen.add(id(b))
            b = b.alias_of
        return b

    def shares_storage(self, other: "Binding") -> bool:
        return self.root() is other.root()


@dataclass(eq=False)
class DetachEvent:
    step: int
    call: cst.Call               # the `t.detach()` call
    source: Binding              # the binding of t
    holder: Binding | None       # the name it is kept in, if a name
    kept_in: str                 # "name", "attribute", "container", "chained"
    expr: cst.CSTNode            # the whole stored expression (t.detach().cpu())



def maybe_alias(b: Binding) -> bool:
    """Whether the chain from `b` to its storage's root passes through a maybe-alias link."""
    seen = set()
    while b.alias_of is not None and id(b) not in seen:
        if b.alias_how == "maybe":
            return True
        seen.add(id(b))
        b = b.alias_of
    return False

