"""Source: https://discuss.pytorch.org/t/problems-about-l2-regularization-excluding-bias/142816
Title: Problems about L2 Regularization excluding bias
What went wrong: the network's regularisation method sums the squared weights it reads from
`model.state_dict()` (weights only, to leave the biases out); state_dict returns detached tensors, so the penalty term added to the
loss carries no gradient and the weights are never decayed by it.
runs: trains; the penalty is in the loss value but adds no gradient (the run prints requires_grad False for the term)
scope: extension
"""
import torch
import torch.nn as nn


class BinaryNet(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.hidden = nn.Linear(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, 1)

    def forward(self, x):
        return torch.sigmoid(self.out(torch.relu(self.hidden(x))))

    def weight_penalty(self, lam):
        weights = [v for k, v in self.state_dict().items() if k.endswith("weight")]
        penalty = sum(w.pow(2).sum() for w in weights)
        return lam * penalty  # expect: GF104


model = BinaryNet(12, 16)
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 12), torch.rand(32, 1).round()
for epoch in range(3):
    optimizer.zero_grad()
    penalty = model.weight_penalty(1e-2)
    loss = criterion(model(x), y) + penalty
    loss.backward()
    optimizer.step()
print("penalty requires grad:", penalty.requires_grad)
