# GF102 negative: embeddings collected with `.detach().cpu()` and labels with
# `.detach().numpy()` for a t-SNE plot. These do alias on CPU, but nothing is
# modified in place afterwards (the normalisation is out-of-place).
import numpy as np
import torch.nn.functional as F


def train_epoch(encoder, classifier, loader, opt):
    bank, labels = [], []
    for x, y in loader:
        emb = encoder(x)
        bank.append(emb.detach().cpu())
        labels.append(y.detach().numpy())
        emb = F.normalize(emb, dim=1)
        loss = F.cross_entropy(classifier(emb), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    feats = np.concatenate([b.numpy() for b in bank])
    return feats, np.concatenate(labels)
