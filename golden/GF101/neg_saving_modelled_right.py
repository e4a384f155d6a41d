# GF101 negative: autograd's saving rules, followed exactly.
# - `w * mask` saves `mask` only because `w` requires grad; here neither side
#   does, so mutating `mask` afterwards is fine.
# - `h ** 2` saves `h`, not its output: scaling the square in place is fine.
# - the two branches of one if/elif never both run: the save in one and the
#   in-place op in the other do not meet.
# - `h[idx]` and `h[keep]` (an index tensor, a boolean mask) are copies, not
#   views of `h`.
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, mode="sq"):
        mask = torch.ones(8)
        weights = torch.full((8,), 0.5)
        scaled = weights * mask
        mask.zero_()
        h = self.fc(x)
        sq = h ** 2
        sq *= 0.5
        if mode == "sq":
            out = torch.sigmoid(h)
        elif mode == "lin":
            out = h + 1
            out *= 2
        else:
            out = h
        idx = torch.tensor([0, 2])
        picked = h[idx]
        keep = h > 0
        positives = h[keep]
        picked.mul_(2)
        positives.mul_(2)
        return out + sq.sum() + scaled.sum() + picked.sum() + positives.sum()


class Rescale(nn.Module):
    # `h = h.mul_(2)` rebinds the same tensor: the name it is kept in is the
    # result of the op itself, not another holder of the storage.
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        h = h.mul_(2)
        h.add_(1)
        return h.clamp_(min=0)
