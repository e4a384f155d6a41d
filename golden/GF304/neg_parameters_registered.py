# GF304 negative: Parameters grouped in containers that do register them, or
# plain containers that are registered another way or hold no trainable value.
# - nn.ParameterDict / nn.ParameterList register every entry;
# - `self.taps` is a plain dict, but each entry is registered by hand with
#   register_parameter in a loop over it;
# - `self.frozen` holds Parameters made with requires_grad=False (constants the
#   optimizer is not meant to see);
# - `self.fast` feeds an optimizer of its own (inner-loop weights kept apart).
import torch
import torch.nn as nn


class Registered(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.ParameterDict({"shift": nn.Parameter(torch.zeros(dim))})
        self.gates = nn.ParameterList()
        for _ in range(2):
            self.gates.append(nn.Parameter(torch.zeros(dim)))
        self.taps = {}
        self.taps["left"] = nn.Parameter(torch.zeros(dim))
        self.taps["right"] = nn.Parameter(torch.zeros(dim))
        for name, p in self.taps.items():
            self.register_parameter("tap_" + name, p)
        self.frozen = [nn.Parameter(torch.ones(dim), requires_grad=False)]
        self.fast = {"w": nn.Parameter(torch.zeros(dim))}
        self.fast_opt = torch.optim.SGD(self.fast.values(), lr=0.1)

    def forward(self, x):
        y = x + self.bias["shift"] + self.taps["left"] - self.taps["right"]
        return y * self.frozen[0] + sum(self.gates) + self.fast["w"]
