# GF103 negative: LPIPS trainer pattern. `clamp_weights()` writes through
# `.data` but is called right after `self.optimizer_net.step()`, which is
# already the projected-gradient form.
import torch
import torch.nn as nn


class LinLayers(nn.Module):
    def __init__(self, chns=(64, 128, 256)):
        super().__init__()
        self.lins = nn.ModuleList([nn.Conv2d(c, 1, 1, bias=False) for c in chns])

    def forward(self, feats):
        return sum(lin(f).mean() for lin, f in zip(self.lins, feats))


class Trainer:
    def __init__(self):
        self.net = LinLayers()
        self.optimizer_net = torch.optim.Adam(self.net.parameters(), lr=1e-4, betas=(0.5, 0.999))

    def clamp_weights(self):
        for module in self.net.modules():
            if hasattr(module, "weight") and module.kernel_size == (1, 1):
                module.weight.data = torch.clamp(module.weight.data, min=0)

    def optimize_parameters(self, feats, judge):
        self.optimizer_net.zero_grad()
        d = self.net(feats)
        loss = (d - judge) ** 2
        loss.backward()
        self.optimizer_net.step()
        self.clamp_weights()
        return loss.item()
