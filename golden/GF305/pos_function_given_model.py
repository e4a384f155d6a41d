# GF305 positive: `fit` is called once, with a module built in the file, so its
# unannotated `model` parameter is a module; the verifier builds it from the
# caller's binding of the same name.
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)


def fit(model, batches, opt):
    for x, y in batches:
        opt.zero_grad()
        loss = ((model.forward(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


model = Scorer()
fit(model, [(torch.randn(4, 5), torch.randn(4))], torch.optim.SGD(model.parameters(), lr=0.1))
