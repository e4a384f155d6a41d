"""Source: https://github.com/microsoft/dpu-utils/pull/34
Title: Do not explicitly invoke forward() in Trainer.
What went wrong: the generic trainer keeps the model given to its constructor and computes each
minibatch's loss with `self.__model.forward(**batch)`, bypassing `nn.Module.__call__` and with it
every forward hook; the pull request calls the model instead.
runs: trains; a forward hook registered on the model never fires (the run prints 0 calls)
scope: documented
"""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)

    def forward(self, x, y):
        return nn.functional.mse_loss(self.lin(x).squeeze(-1), y)


class ModelTrainer:
    def __init__(self, model: nn.Module, lr=0.01):
        self.__model = model
        self.__optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def train_epoch(self, batches):
        for batch in batches:
            self.__optimizer.zero_grad()
            loss = self.__model.forward(**batch)  # expect: GF305
            loss.backward()
            self.__optimizer.step()


model = Regressor()
calls = []
model.register_forward_hook(lambda m, i, o: calls.append(1))
ModelTrainer(model).train_epoch([{"x": torch.randn(4, 5), "y": torch.randn(4)} for _ in range(3)])
print(len(calls))
