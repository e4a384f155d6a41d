import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, width=12, routes=3):
        super().__init__()
        self.router = nn.Linear(width, routes)
        self.body = nn.Linear(width, width)

    def forward(self, h):
        weights = self.router(h).softmax(dim=-1)
        spread = weights.mean(dim=0).pow(2).sum()
        return torch.tanh(self.body(h)) * weights[:, :1], spread


stack = nn.ModuleList([GatedBlock() for _ in range(3)])
optimizer = torch.optim.SGD(stack.parameters(), lr=0.05)
inputs, targets = torch.randn(10, 12), torch.randn(10, 12)

for step in range(20):
    h = inputs
    penalties = []
    for i, block in enumerate(stack):
        h, spread = block(h)
        penalties.append(spread)
    # the router penalties are copied into a fresh tensor: they no longer reach the routers
    router_penalty = torch.tensor(penalties).sum()
    loss = nn.functional.mse_loss(h, targets) + 0.1 * router_penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
