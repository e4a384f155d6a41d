# GF307 positive: the model's forward returns its gate detached, and the step adds
# a sparsity penalty on that gate to the loss: the penalty trains nothing.
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.gate = nn.Linear(6, 6)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        return self.body(x) * g, g.detach()


net = GatedNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(8, 6), torch.randn(8, 6)
    out = net(x)
    loss = F.mse_loss(out[0], y) + 0.01 * out[1].abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
