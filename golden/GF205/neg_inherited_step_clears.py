"""A trainer subclass whose loop calls loss helpers it inherits: `BaseTrainer.clean_loss` and
`BaseTrainer.noisy_loss` start with `self.opt.zero_grad()`, so every iteration clears the
gradients although the subclass's own code never does. (The same holds when the base class
lives in another file of the project: tests/test_step_facts.py.)"""
import torch
import torch.nn as nn


class BaseTrainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.05)
        self.crit = nn.MSELoss()

    def clean_loss(self, x, y):
        self.opt.zero_grad()
        return self.crit(self.net(x), y)

    def noisy_loss(self, x, y):
        self.opt.zero_grad()
        return self.crit(self.net(x + 0.1 * torch.randn_like(x)), y)


class AveragingTrainer(BaseTrainer):
    def fit_epoch(self, batches, noisy=False):
        for x, y in batches:
            loss = self.noisy_loss(x, y) if noisy else self.clean_loss(x, y)
            loss.backward()
            self.opt.step()


if __name__ == "__main__":
    t = AveragingTrainer(nn.Linear(3, 1))
    t.fit_epoch([(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)])
