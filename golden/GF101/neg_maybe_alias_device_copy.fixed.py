"""Keeping a host copy of an activation, then shifting the activation in place.

`.cpu()`, `.to(device)` and `.float()` return the tensor itself only when it is already on that
device or of that dtype; on a GPU run `snapshot` is a copy and the `+=` changes nothing else.
Whether they alias depends on where the code runs, so GF101 does not claim shared storage.
(Linear saved its input, not its output, so the `+=` itself is fine for backward.)
"""
import torch.nn as nn


class Probe(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.body = nn.Linear(width, width)

    def forward(self, x, history):
        act = self.body(x)
        snapshot = act.detach().clone().cpu()
        half = act.float()
        moved = act.to("cuda:0") if x.is_cuda else act.to("cpu")
        act += 0.5
        history.append(snapshot)
        return act, half.mean(), moved.sum()
