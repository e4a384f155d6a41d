# GF101 positive: a tabular residual block whose activation is
# nn.LeakyReLU(inplace=True). Run in place, LeakyReLU keeps its result for
# backward (out of place it keeps its input), so adding the identity in place
# onto that result makes backward() raise "modified by an inplace operation".
import torch
import torch.nn as nn


class DenseBlock(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.proj = nn.Linear(width, width, bias=False)
        self.norm = nn.BatchNorm1d(width)
        self.act = nn.LeakyReLU(inplace=True)

    def forward(self, x):
        out = self.act(self.norm(self.proj(x)))
        out = out + x
        return self.act(out)


block = DenseBlock(16)
opt = torch.optim.SGD(block.parameters(), lr=0.01)
for _ in range(2):
    y = block(torch.randn(8, 16))
    loss = y.square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
