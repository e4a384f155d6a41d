"""Source: https://github.com/snakers4/silero-vad/pull/699
Title: fix bug in tuning/utils.py: add optimizer.zero_grad() before loss.backward()
What went wrong: the fine-tuning helper's training function runs backward() and
`optimizer.step()` for each batch with no `zero_grad()` anywhere, so gradients of all batches
pile up.
runs: trains; the gradients accumulate over the whole epoch
scope: documented
"""
import torch
import torch.nn as nn


class FrameClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 5, padding=2)
        self.out = nn.Conv1d(8, 1, 1)

    def forward(self, wav):
        return torch.sigmoid(self.out(torch.relu(self.conv(wav)))).squeeze(1)


def train(model, loader, optimizer, criterion):
    model.train()
    for wav, labels in loader:
        probs = model(wav)
        loss = criterion(probs, labels)
        loss.backward()  # expect: GF205
        optimizer.step()


if __name__ == "__main__":
    model = FrameClassifier()
    loader = [(torch.randn(4, 1, 64), torch.randint(0, 2, (4, 64)).float()) for _ in range(3)]
    train(model, loader, torch.optim.Adam(model.parameters(), lr=1e-4), nn.BCELoss())
