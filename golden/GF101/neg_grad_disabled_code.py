# GF101 negative: code that only ever runs with gradients off. A hand-written
# optimizer's step() (torch.optim subclass), the forward of a custom autograd
# Function (autograd runs it with grad mode disabled), and a post-processing
# helper that is only called under torch.no_grad().
import torch
import torch.nn as nn


class SignSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                g /= g.norm() + 1e-12
                p.data.add_(g.sign(), alpha=-group["lr"])


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        y *= 2.0
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - (y / 2) ** 2) * 2


def to_probabilities(logits):
    probs = logits.softmax(dim=-1)
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


model = nn.Linear(8, 3)
with torch.no_grad():
    preds = to_probabilities(model(torch.randn(4, 8)))
