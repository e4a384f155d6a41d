"""Source: https://github.com/LoreGoetschalckx/GANalyze/issues/7
Title: zero_grad is missing
What went wrong: the PyTorch training loop of the latent-space "transformer" (a learned direction
that shifts generator inputs toward a target score) computes the loss, calls `backward()` and
`optimizer.step()`, but never `zero_grad()`, so the gradients of all earlier batches pile up.
runs: trains; the direction's .grad holds the sum of all ten batches' gradients when the loop ends (the run prints its norm)
scope: documented
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
dim_z = 16
generator = nn.Sequential(nn.Linear(dim_z, 32), nn.Tanh(), nn.Linear(32, 48))
assessor = nn.Sequential(nn.Linear(48, 1), nn.Sigmoid())
for p in list(generator.parameters()) + list(assessor.parameters()):
    p.requires_grad_(False)
transformer = nn.Linear(1, dim_z, bias=False)
optimizer = torch.optim.Adam(transformer.parameters(), lr=2e-4)
for batch_start in range(0, 80, 8):
    z = torch.randn(8, dim_z)
    alpha = torch.rand(8, 1) * 2 - 1
    target = (assessor(generator(z)) + alpha).clamp(0, 1)
    z_shift = z + transformer(alpha)
    loss = ((assessor(generator(z_shift)) - target) ** 2).mean()
    loss.backward()  # expect: GF205
    optimizer.step()
print("direction grad norm:", transformer.weight.grad.norm().item())
