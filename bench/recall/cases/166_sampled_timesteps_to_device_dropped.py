"""Source: https://github.com/huggingface/accelerate/issues/2251
Title: when a tensor is generated from some_func(A.shape) (where A is a tensor), the generated tensor locates in cpu, not A's device
What went wrong: the diffusion training step samples timesteps and weights on the CPU and
then writes `t.to(batch.device)` and `weights.to(batch.device)` as bare statements; `.to` is
not in place, so both stay on the CPU and the step fails with a device mismatch on a GPU.
runs: on a CUDA machine raises RuntimeError (tensors on different devices); on CPU it runs because nothing needs moving
scope: documented
"""
import numpy as np
import torch
import torch.nn as nn


class UniformSampler:
    def __init__(self, num_timesteps=100):
        self.num_timesteps = num_timesteps

    def sample(self, batch_size):
        indices = torch.from_numpy(np.random.randint(0, self.num_timesteps, size=(batch_size,))).long()
        weights = torch.ones(batch_size)
        return indices, weights


device = "cuda" if torch.cuda.is_available() else "cpu"
denoiser = nn.Linear(17, 16).to(device)
sampler = UniformSampler()
optimizer = torch.optim.Adam(denoiser.parameters(), lr=1e-4)
batch = torch.randn(8, 16, device=device)
t, weights = sampler.sample(batch.shape[0])
t.to(batch.device)  # expect: GF209
weights.to(batch.device)
noise = torch.randn_like(batch)
pred = denoiser(torch.cat([batch + noise, t[:, None].float() / 100], dim=1))
loss = (weights * (pred - noise).pow(2).mean(dim=1)).mean()
loss.backward()
optimizer.step()
