# GF104 negative next to the state_dict penalty: the same penalty over named_parameters()
# (live tensors), over state_dict(keep_vars=True) (the parameters themselves), an anchor
# penalty that pulls the live weights towards a saved copy (the copy is a constant on purpose),
# and a penalty that also reads a weight directly.
import torch
import torch.nn as nn


class Sparse(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(9, 14)
        self.outer = nn.Linear(14, 2)
        self.anchor = {k: v.clone() for k, v in self.state_dict().items()}

    def forward(self, x):
        return self.outer(torch.tanh(self.inner(x)))

    def l1_live(self, strength):
        return strength * sum(t.abs().sum() for name, t in self.named_parameters() if "bias" not in name)

    def l1_kept(self, strength):
        return strength * sum(t.abs().sum() for t in self.state_dict(keep_vars=True).values())

    def anchored(self, strength):
        return strength * sum((p - self.anchor[n]).pow(2).sum() for n, p in self.named_parameters())

    def mixed(self, strength):
        frozen = sum(t.abs().sum() for t in self.state_dict().values())
        return strength * (frozen + self.outer.weight.abs().sum())


net = Sparse()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(20, 9), torch.randn(20, 2)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), y) + net.l1_live(1e-3) + net.l1_kept(1e-3) + net.anchored(1e-2) \
        + net.mixed(1e-3)
    loss.backward()
    opt.step()
