"""Source: https://github.com/MIC-DKFZ/nnUNet/pull/2684
Title: Change torch.cuda.amp.GradScaler() to torch.GradScaler("cuda")
What went wrong: the trainer builds its loss scaler with the deprecated
`torch.cuda.amp.GradScaler()` when it trains on a GPU, which PyTorch warns about; the PR
switches to `torch.GradScaler("cuda")`.
runs: on a CUDA machine emits FutureWarning (`torch.cuda.amp.GradScaler(args...)` is deprecated); on CPU the scaler is not built
scope: documented
"""
import torch
import torch.nn as nn


class SegTrainer:
    def __init__(self, device):
        self.device = device
        self.network = nn.Conv3d(1, 2, 3, padding=1).to(device)
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=1e-2, momentum=0.99)
        self.grad_scaler = torch.cuda.amp.GradScaler() if device.type == "cuda" else None  # expect: GF301

    def train_step(self, data, target):
        self.optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(self.network(data), target)
        if self.grad_scaler is not None:
            self.grad_scaler.scale(loss).backward()
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    trainer = SegTrainer(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    data = torch.randn(1, 1, 4, 8, 8).to(trainer.device)
    trainer.train_step(data, torch.randint(0, 2, (1, 4, 8, 8)).to(trainer.device))
