"""Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976
Title: When would the error "one of the variables needed for gradient computation has been modified" occur?
What went wrong: the main-branch activation is used as input of a side branch layer and is
then updated with `+=`, so the side layer's saved input no longer matches.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch
import torch.nn as nn


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(16, 16)
        self.side = nn.Linear(16, 4)
        self.extra = nn.Linear(16, 16)

    def forward(self, inp):
        x = self.main(inp)
        x_side = self.side(x)
        x += self.extra(inp)  # expect: GF101
        return x.sum(dim=1) + x_side.sum(dim=1)


if __name__ == "__main__":
    model = TwoBranch()
    model(torch.randn(5, 16)).sum().backward()
