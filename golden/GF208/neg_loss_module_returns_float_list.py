"""A contrastive loss module returns its loss and, beside it, a list of per-offset hit rates it turned into
Python floats with `.item()`. The training loop keeps a running mean of that list through `np.array`: it holds
floats, never a tensor, so nothing of the graph is kept (the running means of the loss use `.item()` too)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class OffsetContrast(nn.Module):
    def __init__(self, dim, offsets):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(offsets)])

    def forward(self, z, ctx):
        terms, hit_rates = [], []
        for k, head in enumerate(self.heads, 1):
            scores = head(ctx[:, :-k]) @ z[:, k:].transpose(1, 2)
            labels = torch.arange(scores.size(1)).expand(scores.size(0), -1)
            terms.append(F.cross_entropy(scores.transpose(1, 2), labels))
            hit_rates.append((scores.argmax(1) == labels).float().mean().item())
        return torch.stack(terms).mean(), hit_rates


encoder = nn.GRU(6, 6, batch_first=True)
contrast = OffsetContrast(6, 3)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(contrast.parameters()), lr=1e-3)
batches = [torch.randn(4, 10, 6) for _ in range(5)]

for epoch in range(3):
    mean_loss = 0.0
    mean_hits = np.zeros(3)
    for i, feats in enumerate(batches, 1):
        optimizer.zero_grad()
        ctx, _ = encoder(feats)
        loss, hits = contrast(feats, ctx)
        loss.backward()
        optimizer.step()
        mean_loss += (loss.item() - mean_loss) / i
        mean_hits += (np.array(hits) - mean_hits) / i
    print(epoch, mean_loss, 100 * mean_hits)
