# GF104 positive through a named term: the unit-norm penalty on the embedding
# rows is computed from `.data`, stored in `penalty`, then added to the loss
# before backward, so the constraint never pushes on the embeddings.
import torch
import torch.nn as nn
import torch.nn.functional as F


class BagOfWords(nn.Module):
    def __init__(self, vocab=5000, dim=64, n_cls=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.fc = nn.Linear(dim, n_cls)

    def forward(self, tokens):
        return self.fc(self.emb(tokens))


model = BagOfWords()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(300):
    tokens, labels = torch.randint(0, 5000, (32, 20)), torch.randint(0, 4, (32,))
    ce = F.cross_entropy(model(tokens), labels)
    penalty = ((model.emb.weight.norm(dim=1) - 1.0) ** 2).mean()
    loss = ce + 0.1 * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
