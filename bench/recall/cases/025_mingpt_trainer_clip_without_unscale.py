"""Source: https://github.com/pytorch/examples/issues/1196
Title: add scaler.unscale_(optimizer) before clip_grad_norm_
What went wrong: the minGPT-DDP trainer's AMP step clips gradients between
`scaler.scale(loss).backward()` and `scaler.step()` without unscaling them first.
runs: trains but the clip threshold applies to scaled gradients (needs CUDA for AMP)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, grad_norm_clip=1.0, use_amp=True):
        self.model = model
        self.optimizer = optimizer
        self.grad_norm_clip = grad_norm_clip
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def _run_batch(self, source, targets):
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            logits = self.model(source)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_norm_clip)  # expect: GF207
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()


if __name__ == "__main__":
    net = nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 50))
    t = Trainer(net, torch.optim.AdamW(net.parameters(), lr=3e-4), use_amp=False)
    t._run_batch(torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8)))
