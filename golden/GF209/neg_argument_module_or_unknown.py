# GF209 negative: bare conversions of parameters whose callers pass a module
# (modules move in place) or that nobody calls in this file (unknown type).
import torch
import torch.nn as nn


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)

    def attach(self, block, dev):
        block.to(dev)
        self.extra = block

    def prepare(self, thing):
        thing.cuda()
        return thing


h = Holder()
h.attach(nn.Linear(4, 4), torch.device("cpu"))
