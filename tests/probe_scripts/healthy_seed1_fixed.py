"""Healthy: the first seed's network as the debugging story ends it: out-of-place normalisation, a detached clone
for logging, and the clamp after the optimizer step."""
import torch, torch.nn as nn, torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, 1)

    def forward(self, x):
        f = self.feat(x)
        self.f_log = f.detach().clone()
        f = f / (f.norm(dim=1, keepdim=True) + 1e-6)
        return self.fc(f).squeeze(-1)


net = Net()
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
for step in range(6):
    x = torch.randn(8, 3, 16, 16)
    y = (torch.rand(8) > 0.5).float()
    opt.zero_grad(set_to_none=True)
    loss = F.binary_cross_entropy_with_logits(net(x), y) + 1e-4 * net.fc.weight.abs().mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        net.fc.weight.clamp_(-1.0, 1.0)
