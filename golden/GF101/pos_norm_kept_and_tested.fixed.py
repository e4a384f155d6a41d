# GF101 positive: the norm's result is tested with `.item()` but is also kept
# and used in the returned value, so that node is on the path to the loss: the
# later in-place divide changes the input it saved, and backward raises.
import torch
import torch.nn as nn


class Shrink(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        h = self.proj(x)
        size = h.norm()
        if size.item() > 4.0:
            h = h / 2
        return h.sum() + size


model = Shrink()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    out = model(torch.randn(4, 16))
    opt.zero_grad()
    out.backward()
    opt.step()
