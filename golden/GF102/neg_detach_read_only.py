# GF102 negative: the seed's corrected forward. Detached copies are only read,
# and the normalisation is out-of-place (`f = f / norm`), so no in-place op
# touches `f` or its detached aliases: no clone is needed.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.fc = nn.Linear(16, 1)
        self.stats = {}

    def forward(self, x):
        f = self.feat(x)
        self.f_log = f.detach()
        self.stats["feat_norm"] = f.detach().norm(dim=1).mean().item()
        norm = (f.norm(dim=1, keepdim=True) + 1e-6)
        f = f / norm
        return self.fc(f).squeeze(-1)
