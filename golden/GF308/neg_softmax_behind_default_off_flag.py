# GF308 negative: the classifier turns its logits into probabilities only when the
# caller asks for it (`probs=False` by default). The training and validation loops
# call it without the flag, so cross_entropy receives logits; only the `predict`
# helper asks for probabilities, and it computes no loss.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TagScorer(nn.Module):
    def __init__(self, vocab, tags):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, 32)
        self.head = nn.Linear(32, tags)

    def forward(self, tokens, probs=False):
        scores = self.head(torch.tanh(self.embed(tokens)))
        if probs:
            scores = F.softmax(scores, dim=-1)
        return scores


def predict(model, tokens):
    return model(tokens, probs=True).argmax(dim=-1)


scorer = TagScorer(100, 4)
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
for step in range(20):
    tokens, tags = torch.randint(0, 100, (8, 6)), torch.randint(0, 4, (8,))
    out = scorer(tokens)
    loss = loss_fn(out, tags)
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    val_tokens, val_tags = torch.randint(0, 100, (8, 6)), torch.randint(0, 4, (8,))
    val_loss = loss_fn(scorer(val_tokens, probs=False), val_tags)
    print(val_loss.item(), predict(scorer, val_tokens))
