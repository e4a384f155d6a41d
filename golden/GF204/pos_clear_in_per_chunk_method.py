import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Linear(5, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def accumulate(self, xb, yb, parts):
        self.opt.zero_grad(set_to_none=True)
        err = nn.functional.mse_loss(self.net(xb), yb) / parts
        err.backward()

    def apply(self):
        self.opt.step()


learner = Learner()
chunks = [(torch.randn(3, 5), torch.randn(3, 1)) for _ in range(4)]
for epoch in range(3):
    for xb, yb in chunks:
        learner.accumulate(xb, yb, len(chunks))
    learner.apply()
