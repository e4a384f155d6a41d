"""Source: https://github.com/Linesight-RL/linesight/issues/51
Title: Replace deprecated torch.cuda.amp.GradScaler()
What went wrong: the trainer builds its gradient scaler with `torch.cuda.amp.GradScaler()`,
which current PyTorch reports as deprecated (FutureWarning) in favour of
`torch.amp.GradScaler("cuda", ...)`.
runs: trains; torch emits a FutureWarning when the scaler is built
scope: documented
"""
import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Linear(6, 2)
        self.optimizer = torch.optim.RAdam(self.net.parameters(), lr=1e-4)
        self.scaler = torch.cuda.amp.GradScaler()  # expect: GF301

    def train_on_batch(self, x, y):
        self.optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.smooth_l1_loss(self.net(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()


if __name__ == "__main__":
    print(Learner().train_on_batch(torch.randn(4, 6), torch.randn(4, 2)))
