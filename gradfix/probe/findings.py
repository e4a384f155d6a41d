"""What the probe reports: findings that name a line and parameters, and per-layer gradient statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

# kind -> the static rule whose fix applies (None: no rule covers it)
KINDS = {
    "inplace-on-saved-tensor": "GF101",
    "no-gradient": None,
    "nothing-to-train": "GF210",
    "gradient-outside-optimizer": "GF210",
    "vanishing-update": "GF201",
    "gradient-accumulation": "GF205",
    "epoch-scheduler-per-batch": "GF202",
    "parameter-written-outside-optimizer": "GF103",
    "eval-mode-while-training": "GF211",
    "constant-output": None,
}


@dataclass
class Finding:
    kind: str
    message: str
    path: str | None
    line: int | None
    params: list[str] = field(default_factory=list)
    rule: str | None = None
    related: list[dict] = field(default_factory=list)  # other lines: {"path", "line", "role"}

    def to_json(self) -> dict:
        from gradfix.probe.frames import display_path

        out = {"kind": self.kind, "message": self.message,
               "path": display_path(self.path) if self.path else None, "line": self.line,
               "params": list(self.params), "rule": self.rule}
        if self.related:
            out["related"] = [dict(r, path=display_path(r["path"])) for r in self.related]
        return out


@dataclass
class Layer:
    """One parameter over the probed steps of the optimizer that holds it."""

    name: str
    shape: tuple[int, ...]
    optimizer: int | None
    requires_grad: bool
    grad_norms: list[float | None] = field(default_factory=list)  # one per step; None: no gradient

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "optimizer": self.optimizer,
                "requires_grad": self.requires_grad, "grad_norms": list(self.grad_norms)}
