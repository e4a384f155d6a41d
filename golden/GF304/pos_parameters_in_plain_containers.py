# GF304 positive: trainable nn.Parameter values kept inside plain Python
# containers. nn.Module registers a Parameter only when it is the attribute's
# value itself, so `parameters()` lists none of these: an optimizer built from
# it skips them, state_dict() does not save them and `.cuda()` leaves them on
# the CPU.
import torch
import torch.nn as nn


class ScaledMixture(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.gates = []
        for _ in range(n_experts):
            self.gates.append(nn.Parameter(torch.zeros(dim)))
        self.bias = {"shift": nn.Parameter(torch.zeros(dim)), "scale": nn.Parameter(torch.ones(dim))}

    def forward(self, xs):
        mixed = sum(torch.sigmoid(g) * x for g, x in zip(self.gates, xs))
        return mixed * self.bias["scale"] + self.bias["shift"]


if __name__ == "__main__":
    model = ScaledMixture(4, 2)
    print(len(list(model.parameters())))
