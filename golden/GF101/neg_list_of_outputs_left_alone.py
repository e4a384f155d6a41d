# GF101 negative next to the list-of-saved-outputs positive: the fold written out of place
# (a new tensor per element), a list of linear outputs (a Linear saves its input, not its
# output, so adding into one is fine), a list whose elements are replaced before the
# in-place op (an element may then be any tensor), and a list built under no_grad.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Pyramid(nn.Module):
    def __init__(self, width=12, levels=3):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(width, width) for _ in range(levels))

    def forward(self, h):
        acts = [F.relu(head(h)) for head in self.heads]
        for k in range(len(acts) - 1, 0, -1):
            acts[k - 1] = acts[k - 1] + acts[k]
        plain = [head(h) for head in self.heads]
        for k in range(len(plain) - 1, 0, -1):
            plain[k - 1] += plain[k]
        swapped = [torch.sigmoid(head(h)) for head in self.heads]
        swapped[0] = swapped[0] * 0.5
        swapped[0] += swapped[1]
        with torch.no_grad():
            frozen = [F.relu(head(h)) for head in self.heads]
            frozen[0] += frozen[1]
        return acts[0] + plain[0] + swapped[0] + frozen[0]


if __name__ == "__main__":
    Pyramid()(torch.randn(4, 12)).sum().backward()
    print("ok")
