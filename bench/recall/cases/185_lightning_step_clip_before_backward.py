"""Source: https://github.com/simchowitzlabpublic/nano-world-model/pull/22
Title: Clip gradients in configure_gradient_clipping instead of training_step
What went wrong: the module's `training_step` clips the gradients while computing the loss, but
the trainer runs backward() only after `training_step` returns, so the clip sees the previous
step's (already cleared) gradients and the update that follows is never clipped.
runs: trains; the clip runs on zero or None gradients and the logged norm is stale
scope: extension
"""
import torch
import torch.nn as nn


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
        self.gradient_clip_norm = 1.0

    def training_step(self, batch):
        obs, next_obs = batch
        loss = nn.functional.mse_loss(self.net(obs), next_obs)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.parameters(), self.gradient_clip_norm)  # expect: GF206
        return loss, grad_norm


model = WorldModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(3):
    batch = (torch.randn(16, 8), torch.randn(16, 8))
    optimizer.zero_grad()
    loss, grad_norm = model.training_step(batch)
    loss.backward()
    optimizer.step()
    print(step, loss.item(), float(grad_norm))
