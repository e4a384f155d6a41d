"""WGAN-GP critic step: the generator's samples are detached (the generator is not trained here), and the
gradient penalty is computed by a helper that is handed the critic itself and runs it on interpolated samples
with `create_graph=True`. The penalty term trains the critic; the detach cuts only the generator."""
import torch
import torch.nn as nn


def interpolation_penalty(critic, real, fake, target_norm=1.0):
    mix = torch.rand(real.size(0), 1)
    blended = (mix * real + (1 - mix) * fake).requires_grad_(True)
    scores = critic(blended)
    grads = torch.autograd.grad(scores.sum(), blended, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - target_norm) ** 2).mean()


def critic_epoch(generator: nn.Module, critic: nn.Module, critic_opt, loader, latent=8, weight=10.0):
    for real, _ in loader:
        noise = torch.randn(real.size(0), latent)
        fake = generator(noise).detach()
        penalty = interpolation_penalty(critic, real, fake)
        critic_loss = critic(fake).mean() - critic(real).mean() + weight * penalty
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()


gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
crit = nn.Sequential(nn.Linear(16, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
critic_epoch(gen, crit, torch.optim.Adam(crit.parameters(), lr=1e-4),
             [(torch.randn(4, 16), None) for _ in range(3)])
