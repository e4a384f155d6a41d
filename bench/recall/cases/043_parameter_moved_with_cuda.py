"""Source: https://github.com/Linardos/SalEMA/issues/7
Title: Train with CUDA meet Error: raise ValueError("can't optimize a non-leaf Tensor")
What went wrong: the EMA mixing weight `alpha` is wrapped as a Parameter and then moved
with `.cuda()`, so the attribute is a non-leaf copy (printed with grad_fn=<CopyBackwards>)
and building the optimizer with it fails.
runs: on a CUDA machine raises ValueError (can't optimize a non-leaf Tensor)
scope: documented
"""
import torch
import torch.nn as nn


class SalEMA(nn.Module):
    def __init__(self, alpha=0.25):
        super().__init__()
        self.salgan = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
        self.alpha = nn.Parameter(torch.Tensor([alpha])).cuda()  # expect: GF303

    def forward(self, frame, prev_state):
        x = torch.sigmoid(self.salgan(frame))
        return torch.sigmoid(self.alpha) * x + (1 - torch.sigmoid(self.alpha)) * prev_state


model = SalEMA().cuda()
print("Initial alpha set to:", model.alpha)
optimizer = torch.optim.Adam(
    [{"params": model.salgan.parameters(), "lr": 1e-7, "weight_decay": 1e-4}, {"params": model.alpha, "lr": 0.1}]
)
