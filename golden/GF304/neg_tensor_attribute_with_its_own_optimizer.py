# GF304 negative: the bias-correction weights are a plain tensor on purpose: they have an
# optimizer of their own, built over them right away, and stay out of the model's
# parameters() so that the main optimizer leaves them alone.
import torch
import torch.nn as nn


class Learner(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.net = nn.Linear(8, classes)
        self.bias_params = torch.tensor([1.0, 0.0], requires_grad=True)
        self.bias_opt = torch.optim.SGD([self.bias_params], lr=0.01)

    def forward(self, x):
        return self.net(x) * self.bias_params[0] + self.bias_params[1]
