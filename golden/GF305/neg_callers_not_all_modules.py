# GF305 negative: the callers do not show a module. `run` is called with a module
# and with a plain object of the file (whose class has no `__call__`); the holder
# is constructed with a TorchScript program; `evaluate` has no caller here.
import torch
import torch.nn as nn


class LookupModel:
    def forward(self, x):
        return x * 2


def run(model, x):
    return model.forward(x)


class Holder:
    def __init__(self, program):
        self.program = program

    def apply(self, x):
        return self.program.forward(x)


def evaluate(model, x):
    return model.forward(x)


run(nn.Linear(2, 2), torch.randn(1, 2))
run(LookupModel(), torch.randn(1, 2))
holder = Holder(torch.jit.load("model.pt"))
