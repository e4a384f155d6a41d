"""Source: https://github.com/pnnl/neuromancer/pull/292
Title: Fixing leaking autograd graph memory in Trainer
What went wrong: the trainer backpropagates `output["train_loss"]` and then appends that same entry
to the epoch's `losses` list without detaching it, so the list holds every batch's autograd
graph until the epoch mean is taken ("hundreds of MB or a few GB" per long run).
runs: trains; every stored loss keeps its grad_fn and graph (the run prints the count)
scope: extension
"""
import torch
import torch.nn as nn


class Problem(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, batch):
        pred = self.net(batch["x"])
        return {"pred": pred, "train_loss": nn.functional.mse_loss(pred, batch["y"])}


model = Problem()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_data = [{"x": torch.randn(16, 4), "y": torch.randn(16, 4)} for _ in range(5)]
for epoch in range(2):
    losses = []
    for t_batch in train_data:
        output = model(t_batch)
        optimizer.zero_grad()
        output["train_loss"].backward()
        optimizer.step()
        losses.append(output["train_loss"])  # expect: GF208
    mean_loss = torch.mean(torch.stack(losses))
    print(epoch, sum(l.grad_fn is not None for l in losses), mean_loss.item())
