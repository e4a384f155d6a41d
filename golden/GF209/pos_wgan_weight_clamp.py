# GF209 positive: WGAN weight clipping written out of place: the critic's
# weights are never clipped, so the Lipschitz constraint is not enforced.
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
loader = [(torch.randn(8, 32), torch.randn(8, 32)) for _ in range(100)]

for epoch in range(5):
    for real, fake in loader:
        opt.zero_grad()
        loss = critic(fake).mean() - critic(real).mean()
        loss.backward()
        opt.step()
        for p in critic.parameters():
            p.data.clamp(-0.01, 0.01)
