# GF208 positive: the model returns a dict whose "objective" entry is what each
# batch backpropagates, and the loop keeps that entry in a list made once per
# epoch, so every step's loss tensor and graph stay alive until the epoch ends.
# Detect only: store `.item()` (or a detached copy) of the entry instead.
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x, y):
        pred = self.body(x)
        return {"pred": pred, "objective": nn.functional.l1_loss(pred, y)}


net = Regressor()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(10, 6), torch.randn(10, 1)) for _ in range(4)]
for epoch in range(3):
    epoch_objectives = []
    for x, y in batches:
        result = net(x, y)
        opt.zero_grad()
        result["objective"].backward()
        opt.step()
        epoch_objectives.append(result["objective"])
    print(epoch, all(t.grad_fn is not None for t in epoch_objectives))
