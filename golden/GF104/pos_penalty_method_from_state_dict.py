# GF104 positive: the model's sparsity penalty sums the absolute values it reads from its own
# state_dict(), leaving the biases out by name. state_dict() hands back detached tensors, so
# the term added to the loss has no gradient: the printed loss includes it, the weights are
# never pushed towards zero.
import torch
import torch.nn as nn


class Sparse(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(9, 14)
        self.outer = nn.Linear(14, 2)

    def forward(self, x):
        return self.outer(torch.tanh(self.inner(x)))

    def l1_term(self, strength):
        return strength * sum(t.abs().sum() for name, t in self.state_dict().items() if "bias" not in name)


net = Sparse()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(20, 9), torch.randn(20, 2)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), y) + net.l1_term(1e-3)
    loss.backward()
    opt.step()
