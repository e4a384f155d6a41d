"""Source: https://github.com/bowang-lab/Transformer-GCN-QA/pull/32
Title: Removes erroneous extra softmax
What went wrong: the question-answering model put a softmax at its output, over the candidate
scores, and was trained with CrossEntropyLoss, which applies its own softmax; the second
softmax smoothed the scores and weakened the gradient signal. The fix returns the raw scores.
runs: trains; the loss saturates near log(number of candidates)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CandidateScorer(nn.Module):
    def __init__(self, dim=32, candidates=6):
        super().__init__()
        self.encode = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, candidates)

    def forward(self, x):
        h = torch.tanh(self.encode(x))
        return F.softmax(self.out(h), dim=-1)


def fit(model, batches, epochs=2):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for x, answer in batches:
            optimizer.zero_grad()
            logits = model(x)
            loss = criterion(logits, answer)  # expect: GF308
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    fit(CandidateScorer(), [(torch.randn(4, 32), torch.randint(0, 6, (4,))) for _ in range(3)])
