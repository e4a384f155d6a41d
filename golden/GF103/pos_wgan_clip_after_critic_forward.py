# GF103 positive: the same critic update, but the clip sits after the critic has scored
# the real and fake batches. The pending graph saved the unclipped weights, while the
# clip rewrites them in place through `.data`: backward() mixes the two states and the
# update is not the gradient of the weights the optimizer steps.
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
bound = 0.01

for it in range(4):
    real = torch.randn(8, 2)
    opt_c.zero_grad()
    fake = gen(torch.randn(8, 3)).detach()
    c_loss = critic(fake).mean() - critic(real).mean()
    for w in critic.parameters():
        w.data.clamp_(-bound, bound)
    c_loss.backward()
    opt_c.step()
