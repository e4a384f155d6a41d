# GF205 positive: a learner object's `update` method runs one optimisation step
# (backward, then the optimizer's step) and clears nothing; the loop that drives
# it, in another function, clears nothing either. Each update therefore adds its
# gradient onto all the earlier ones.
import torch
import torch.nn as nn


class Learner:
    def __init__(self, dim):
        self.critic = nn.Sequential(nn.Linear(dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.RMSprop(self.critic.parameters(), lr=3e-4)

    def update(self, states, returns):
        values = self.critic(states).squeeze(-1)
        loss = (values - returns).pow(2).mean()
        loss.backward()
        self.opt.step()
        return float(loss)


def run(n_updates=50):
    learner = Learner(8)
    history = []
    step = 0
    while step < n_updates:
        states, returns = torch.randn(16, 8), torch.randn(16)
        history.append(learner.update(states, returns))
        step += 1
    return history


if __name__ == "__main__":
    print(run()[-1])
