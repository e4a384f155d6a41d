# GF104 negative: a gradient penalty whose mix of real and generated samples is made
# through `.data` and at once turned into a new leaf (`Variable(..., requires_grad=True)`
# in one helper, `.requires_grad_()` in the other). The penalty is the norm of the
# gradient with respect to that leaf: it trains the critic, and the generator is
# meant to get nothing from it.
import torch
import torch.nn as nn
from torch import autograd
from torch.autograd import Variable

critic = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
maker = nn.Linear(3, 4)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-4)


def slope_penalty(real, fake):
    t = torch.rand(real.size(0), 1)
    blend = t * real.data + (1 - t) * fake.data
    blend = Variable(blend, requires_grad=True)
    out = critic(blend)
    slopes = autograd.grad(out, blend, torch.ones_like(out), create_graph=True)[0]
    return ((slopes.norm(2, dim=1) - 1) ** 2).mean()


def slope_penalty_inplace_flag(real, fake):
    t = torch.rand(real.size(0), 1)
    blend = t * real.data + (1 - t) * fake.data
    blend.requires_grad_()
    slopes = autograd.grad(critic(blend).sum(), blend, create_graph=True)[0]
    return ((slopes.norm(2, dim=1) - 1) ** 2).mean()


for it in range(10):
    real = torch.randn(8, 4)
    fake = maker(torch.randn(8, 3))
    critic_opt.zero_grad()
    loss = critic(fake.detach()).mean() - critic(real).mean()
    loss = loss + 10 * slope_penalty(real, fake) + 10 * slope_penalty_inplace_flag(real, fake)
    loss.backward()
    critic_opt.step()
