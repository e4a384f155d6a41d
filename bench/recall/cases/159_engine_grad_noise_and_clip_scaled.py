"""Source: https://github.com/rwth-i6/returnn/pull/1595
Title: Torch: unscale gradients before noise and clipping
What went wrong: with AMP on, the engine's step adds gradient noise and clips the gradient
norm while the gradients are still multiplied by the GradScaler's scale; the fix calls
`unscale_` on the optimizer before both.
runs: trains; the noise and the clip threshold apply to gradients that are 65536 times too large
scope: documented
"""
import torch
import torch.nn as nn


class Engine:
    def __init__(self, model, grad_clip=5.0, grad_noise=0.01):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.grad_scaler = torch.amp.GradScaler(self.device)
        self.grad_clip = grad_clip
        self.grad_noise = grad_noise

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast(device_type=self.device, dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(self.model(x).float(), y)
        self.grad_scaler.scale(loss).backward()
        for p in self.model.parameters():
            p.grad.add_(torch.randn_like(p.grad) * self.grad_noise)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)  # expect: GF207
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()


if __name__ == "__main__":
    engine = Engine(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4)))
    engine.train_step(torch.randn(8, 10), torch.randint(0, 4, (8,)))
