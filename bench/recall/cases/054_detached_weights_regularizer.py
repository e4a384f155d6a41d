"""Source: https://github.com/yifita/deep_cage/issues/16
Title: Why use weights = weights.detach() on line 137 of the file common.py?
What went wrong: the network detaches its predicted weights before returning them, so the
weight-regularisation term added to the loss has no effect whatever its coefficient.
runs: trains but the WREG term contributes no gradient
scope: extension (the detach is inside the model's forward, not in the training step)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CageNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 32)
        self.weight_head = nn.Linear(32, 8)
        self.offset_head = nn.Linear(32, 3)

    def forward(self, points):
        h = F.relu(self.enc(points))
        weights = torch.softmax(self.weight_head(h), dim=-1)
        weights = weights.detach()  # expect: GF307
        return {"deformed": points + self.offset_head(h), "weight": weights}


net = CageNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
mvc_weight = 10.0
for _ in range(3):
    src, tgt = torch.randn(64, 3), torch.randn(64, 3)
    outputs = net(src)
    loss = F.mse_loss(outputs["deformed"], tgt)
    loss = loss + outputs["weight"].pow(2).mean() * mvc_weight
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
