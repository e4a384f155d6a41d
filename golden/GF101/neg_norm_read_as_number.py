# GF101 negative: the only ops that saved `h` are norms and a max whose results
# go straight into `.item()`, `float()` or a comparison for the loop and branch
# tests. Those nodes never lead to the loss, so backward never reads what they
# saved, and the in-place rescaling of `h` is harmless.
import torch
import torch.nn as nn


class Rescaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        h = self.proj(x)
        while h.norm().item() > 4.0:
            h /= 2
        if float(h.abs().max()) < 0.1:
            h *= 10
        if h.pow(2).sum() > 100:
            h -= 1
        return h.sum()


model = Rescaler()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    out = model(torch.randn(4, 16))
    opt.zero_grad()
    out.backward()
    opt.step()
