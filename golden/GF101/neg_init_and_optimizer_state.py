# GF101 negative: initialisers and optimizer state. The in-place normalisation
# in reset_parameters and the momentum-buffer updates in a hand-written
# optimizer step (under @torch.no_grad()) are intentional.
import torch
import torch.nn as nn


class CosineLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.reset_parameters()

    def reset_parameters(self):
        w = torch.randn(self.weight.shape)
        w /= w.norm(dim=1, keepdim=True)
        with torch.no_grad():
            self.weight.copy_(w)

    def forward(self, x):
        return x @ self.weight.t()


class SimpleMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01, beta=0.9):
        super().__init__(params, dict(lr=lr, beta=beta))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                buf = self.state[p].setdefault("buf", torch.zeros_like(p))
                buf.mul_(group["beta"])
                buf.add_(p.grad)
                p.add_(buf, alpha=-group["lr"])
