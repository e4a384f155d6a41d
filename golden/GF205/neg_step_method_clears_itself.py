# GF205 negative: the same learner shape, but the per-step method clears the
# gradients itself (set_to_none) before its backward, so each update uses one
# batch's gradient. The plain function `sgd_step` is driven by a loop that clears
# through the model before each call: also correct.
import torch
import torch.nn as nn


class Learner:
    def __init__(self, dim):
        self.critic = nn.Sequential(nn.Linear(dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.RMSprop(self.critic.parameters(), lr=3e-4)

    def update(self, states, returns):
        self.opt.zero_grad(set_to_none=True)
        values = self.critic(states).squeeze(-1)
        loss = (values - returns).pow(2).mean()
        loss.backward()
        self.opt.step()
        return float(loss)


def sgd_step(net, optimizer, x, y):
    loss = nn.functional.mse_loss(net(x), y)
    loss.backward()
    optimizer.step()


def run(n_updates=50):
    learner = Learner(8)
    for _ in range(n_updates):
        learner.update(torch.randn(16, 8), torch.randn(16))
    net = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(n_updates):
        net.zero_grad()
        sgd_step(net, optimizer, torch.randn(8, 4), torch.randn(8, 1))


if __name__ == "__main__":
    run()
