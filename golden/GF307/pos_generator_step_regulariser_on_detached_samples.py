"""Generator step with a smoothness regulariser computed by a helper of the file on the generated samples, but
the samples are detached before the helper sees them, and the helper is handed no module: that term is a
constant to autograd, so the regulariser trains nothing (only the adversarial term reaches the generator)."""
import torch
import torch.nn as nn


def roughness(samples):
    return (samples[:, 1:] - samples[:, :-1]).abs().mean()


def generator_epoch(generator: nn.Module, critic: nn.Module, gen_opt, steps, batch=4, latent=8):
    for _ in range(steps):
        noise = torch.randn(batch, latent)
        fake = generator(noise)
        gen_loss = -critic(fake).mean() + 0.1 * roughness(fake.detach())
        gen_opt.zero_grad()
        gen_loss.backward()
        gen_opt.step()


gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
crit = nn.Sequential(nn.Linear(16, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
generator_epoch(gen, crit, torch.optim.Adam(gen.parameters(), lr=1e-4), 3)
