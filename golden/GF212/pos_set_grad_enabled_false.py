# GF212 positive: torch.set_grad_enabled(False) around the embedding lookup, whose
# table the optimizer holds: the embeddings are never trained.
import torch
import torch.nn as nn

emb = nn.Embedding(1000, 32)
clf = nn.Linear(32, 2)
opt = torch.optim.SGD(list(emb.parameters()) + list(clf.parameters()), lr=0.1)


def train(batches):
    for tokens, labels in batches:
        with torch.set_grad_enabled(False):
            feats = emb(tokens).mean(1)
        loss = nn.functional.cross_entropy(clf(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
