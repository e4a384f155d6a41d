"""The same contrastive loss module, but the per-offset hit rates are built from the soft scores and kept as
tensors (no `.item()`, no argmax): they carry the graph, and the running mean of the first one keeps every
iteration's graph alive."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftOffsetContrast(nn.Module):
    def __init__(self, dim, offsets):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(offsets)])

    def forward(self, z, ctx):
        terms, soft_hits = [], []
        for k, head in enumerate(self.heads, 1):
            scores = head(ctx[:, :-k]) @ z[:, k:].transpose(1, 2)
            labels = torch.arange(scores.size(1)).expand(scores.size(0), -1)
            terms.append(F.cross_entropy(scores.transpose(1, 2), labels))
            soft_hits.append(scores.softmax(1).diagonal(dim1=1, dim2=2).mean())
        return torch.stack(terms).mean(), soft_hits


encoder = nn.GRU(6, 6, batch_first=True)
contrast = SoftOffsetContrast(6, 3)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(contrast.parameters()), lr=1e-3)
batches = [torch.randn(4, 10, 6) for _ in range(5)]

for epoch in range(3):
    first_offset = 0.0
    for i, feats in enumerate(batches, 1):
        optimizer.zero_grad()
        ctx, _ = encoder(feats)
        loss, hits = contrast(feats, ctx)
        loss.backward()
        optimizer.step()
        first_offset += hits[0]
    print(epoch, float(first_offset))
