"""Source: https://github.com/BatsResearch/labelmodels/issues/4
Title: Memory leak in training loop
What went wrong: the model's own fitting method adds every batch's loss tensor into
`running_loss`, so the graph of every batch of the epoch stays alive; the reporter's GPU ran
out of memory and the fix is `running_loss += loss.item()`.
runs: trains; `running_loss` is a tensor with a grad_fn that chains every batch of the epoch
scope: documented
"""
import torch
import torch.nn as nn


class LabelModel(nn.Module):
    def __init__(self, num_lfs=6, num_classes=3):
        super().__init__()
        self.accuracy = nn.Parameter(torch.zeros(num_lfs, num_classes))

    def forward(self, votes):
        return torch.logsumexp(votes @ self.accuracy, dim=1)

    def estimate(self, batches, epochs=3):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.01)
        for epoch in range(epochs):
            running_loss = 0.0
            for votes in batches:
                optimizer.zero_grad()
                loss = -1 * torch.mean(self(votes))
                loss.backward()
                optimizer.step()
                running_loss += loss  # expect: GF208
            print(epoch, running_loss / len(batches))


if __name__ == "__main__":
    LabelModel().estimate([torch.randn(16, 6) for _ in range(4)])
