# GF205 negative: the per-step method clears nothing, but something else may:
# (a) the class has a `reset_grads` method the driving loop calls between
# updates; (b) a second learner's loop hands the learner to a function of another
# module (`hooks.after_update`), which may clear its gradients; (c) a learner built
# with a fresh optimizer over a fresh network on every call starts from no
# gradient at all. gradfix cannot show an accumulation in any of them.
import torch
import torch.nn as nn

import hooks


class Learner:
    def __init__(self, dim):
        self.critic = nn.Linear(dim, 1)
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

    def update(self, states, returns):
        loss = (self.critic(states).squeeze(-1) - returns).pow(2).mean()
        loss.backward()
        self.opt.step()

    def reset_grads(self):
        for p in self.critic.parameters():
            p.grad = None


class PlainLearner:
    def __init__(self, dim):
        self.critic = nn.Linear(dim, 1)
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

    def update(self, states, returns):
        loss = (self.critic(states).squeeze(-1) - returns).pow(2).mean()
        loss.backward()
        self.opt.step()


def one_shot(states, returns):
    critic = nn.Linear(states.shape[1], 1)
    opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    loss = (critic(states).squeeze(-1) - returns).pow(2).mean()
    loss.backward()
    opt.step()
    return critic


def run(n_updates=20):
    a = Learner(8)
    for _ in range(n_updates):
        a.update(torch.randn(16, 8), torch.randn(16))
        a.reset_grads()
    b = PlainLearner(8)
    for _ in range(n_updates):
        b.update(torch.randn(16, 8), torch.randn(16))
        hooks.after_update(b)
    for _ in range(n_updates):
        one_shot(torch.randn(16, 8), torch.randn(16))
