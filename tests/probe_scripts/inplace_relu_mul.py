"""In-place multiply on a ReLU output (ReLU saves its output): the forward and in-place lines differ."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        gate = h.mean(dim=1, keepdim=True)
        h.mul_(2.0)
        return self.out(h * gate)


model = Block()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad()
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
