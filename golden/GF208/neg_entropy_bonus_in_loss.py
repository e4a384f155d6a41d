# GF208 negative: an entropy bonus summed over a rollout with `+=` and subtracted in
# the loss that is backpropagated. Keeping its graph is the point; `.item()` would
# silently drop the bonus from the gradient.
import torch
import torch.nn as nn
from torch.distributions import Categorical

actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
critic = nn.Linear(4, 1)
opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=3e-4)

for update in range(100):
    logps, values = [], []
    spread = 0
    for t in range(8):
        obs = torch.randn(4)
        pi = Categorical(logits=actor(obs))
        act = pi.sample()
        logps.append(pi.log_prob(act))
        values.append(critic(obs))
        spread += pi.entropy().mean()
    returns = torch.ones(8)
    adv = returns - torch.cat(values)
    pg = -(torch.stack(logps) * adv.detach()).mean()
    vf = adv.pow(2).mean()
    total = pg + 0.5 * vf - 0.01 * spread
    opt.zero_grad()
    total.backward()
    opt.step()
