"""A tagger whose `forward` starts with `self.zero_grad()`: the loop has no zero_grad of its own, but every
forward call clears the gradients of the parameters the optimizer holds."""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.out = nn.Linear(8, 5)

    def forward(self, words, tags):
        self.zero_grad()
        scores = self.out(self.emb(words))
        return nn.functional.cross_entropy(scores.view(-1, 5), tags.view(-1))


model = Tagger()
optim = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    words = torch.randint(0, 50, (4, 7))
    tags = torch.randint(0, 5, (4, 7))
    loss = model(words, tags)
    loss.backward()
    optim.step()
