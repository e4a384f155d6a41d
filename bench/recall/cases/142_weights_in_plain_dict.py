"""Source: https://github.com/pytorch/pytorch/issues/4631
Title: Only nn.Parameters defined directly within nn.Module are listed in module.parameters()
What went wrong: the custom module keeps its `nn.Parameter` weights in a plain Python dict
attribute, so `parameters()` does not list them and an optimizer built from it never
updates them (the answer is `nn.ParameterDict`).
runs: `list(cell.parameters())` is empty; the optimizer gets no parameters
scope: documented
"""
import torch
import torch.nn as nn


class GatedCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.weights = {}  # expect: GF304
        self.weights["w_i"] = nn.Parameter(torch.randn(input_size, hidden_size) * 0.1)
        self.weights["w_h"] = nn.Parameter(torch.randn(hidden_size, hidden_size) * 0.1)

    def forward(self, x, h):
        return torch.tanh(x @ self.weights["w_i"] + h @ self.weights["w_h"])


if __name__ == "__main__":
    cell = GatedCell(6, 4)
    print("registered:", len(list(cell.parameters())))
    try:
        torch.optim.SGD(cell.parameters(), lr=0.1)
    except ValueError as err:
        print(err)
