# GF205 positive: an adversarial loop with two optimizers clears the generator's
# gradients every batch but never the critic's. The critic's .grad keeps the sum
# of every batch so far (the generator's backward adds to it too), so each
# critic step grows with the step count.
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
critic = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt_gen = torch.optim.Adam(gen.parameters(), lr=2e-4)
opt_critic = torch.optim.Adam(critic.parameters(), lr=2e-4)
real_batches = [torch.randn(8, 8) for _ in range(5)]

for real in real_batches:
    fake = gen(torch.randn(8, 4))
    critic_loss = critic(fake.detach()).mean() - critic(real).mean()
    critic_loss.backward()
    opt_critic.step()

    opt_gen.zero_grad()
    gen_loss = -critic(fake).mean()
    gen_loss.backward()
    opt_gen.step()
