# GF304 negative: a plain dict holds the candidate backbones; a helper picks one by name, and
# its layers but the last are registered through `nn.Sequential(*children)`. Everything the
# forward uses is registered; the unused candidate staying out of parameters() is harmless,
# and `nn.ModuleDict` would add it and change every state_dict key of saved checkpoints.
import torch.nn as nn
import torch.nn.functional as F


class SmallNet(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Conv2d(3, width, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(width, 10)


class ContrastiveEncoder(nn.Module):
    def __init__(self, arch, proj_dim):
        super().__init__()
        self.candidates = {"narrow": SmallNet(32), "wide": SmallNet(128)}
        base = self._pick(arch)
        width = base.fc.in_features
        self.trunk = nn.Sequential(*list(base.children())[:-1])
        self.proj_in = nn.Linear(width, width)
        self.proj_out = nn.Linear(width, proj_dim)

    def _pick(self, arch):
        try:
            chosen = self.candidates[arch]
            return chosen
        except KeyError:
            raise ValueError(f"unknown backbone {arch}")

    def forward(self, x):
        h = self.trunk(x).flatten(1)
        return h, self.proj_out(F.relu(self.proj_in(h)))
