# GF102 positive (dict alias) together with GF101: `logs["feat"]` keeps a
# detached alias of `feat`, then `feat` is L2-normalised in place. norm saved
# `feat`, so backward raises (GF101), and the log would hold normalised
# values instead of the raw projection (GF102).
import torch
import torch.nn as nn


class ProjectionHead(nn.Module):
    def __init__(self, dim=512, out_dim=128):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, out_dim))

    def forward(self, x, logs):
        feat = self.mlp(x)
        logs["feat"] = feat.detach()
        feat /= feat.norm(dim=1, keepdim=True)
        return feat
