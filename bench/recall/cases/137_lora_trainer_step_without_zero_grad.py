"""Source: https://github.com/tenstorrent/tt-blacksmith/pull/711
Title: [Trainer] Fix Bug Where Zero Grad was Left Out
What went wrong: the trainer class used for LoRA fine-tuning calls backward() and the
optimizer step on every batch but never clears the gradients after a step, so each step uses
the sum of all earlier gradients.
runs: trains; the gradients grow across steps because nothing clears them
scope: documented
"""
import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.base = nn.Linear(d, d)
        self.base.requires_grad_(False)
        self.a = nn.Parameter(torch.randn(r, d) * 0.01)
        self.b = nn.Parameter(torch.zeros(d, r))

    def forward(self, x):
        return self.base(x) + x @ self.a.t() @ self.b.t()


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW([model.a, model.b], lr=lr)

    def train_epoch(self, batches):
        for x, y in batches:
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()  # expect: GF205
            self.optimizer.step()


if __name__ == "__main__":
    Trainer(LoRALinear()).train_epoch([(torch.randn(4, 16), torch.randn(4, 16)) for _ in range(5)])
