# GF206 negative: clips that do act on the gradients the step uses.
# - the first loop clips between backward() and step(), the documented order;
# - the second accumulates over two micro-batches: the clear runs only at the
#   start of a window, so a clip before the next backward sees the gradients
#   gathered so far (unusual, but not a clip of cleared gradients);
# - the third clears the critic's optimizer, then clips the actor, whose
#   gradients come from the previous iteration's second backward.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

for it in range(20):
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    opt.zero_grad()
    loss = (net(x) - y).abs().mean()
    loss.backward()
    torch.nn.utils.clip_grad_value_(net.parameters(), 0.5)
    opt.step()

for it in range(20):
    if it % 2 == 0:
        opt.zero_grad()
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    ((net(x) - y).abs().mean() / 2).backward()
    if it % 2 == 1:
        opt.step()

actor, critic = nn.Linear(6, 1), nn.Linear(6, 1)
actor_opt = torch.optim.SGD(actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
for it in range(20):
    x = torch.randn(32, 6)
    critic_opt.zero_grad()
    torch.nn.utils.clip_grad_norm_(actor.parameters(), 1.0)
    critic(x).pow(2).mean().backward()
    critic_opt.step()
    actor_opt.step()
    actor_opt.zero_grad()
    actor(x).mean().backward()
