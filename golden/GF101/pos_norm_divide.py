# GF101 positive: L2-normalised embedding head (siamese/triplet style).
# `f /= f.norm(...)`: norm saves its input f for backward, so the in-place
# divide bumps f's version and backward raises. The right side is a call
# (an atom), so the rewrite does not wrap it in parentheses.
import torch
import torch.nn as nn
import torch.nn.functional as F


class EmbeddingNetL2(nn.Module):
    def __init__(self, in_dim=128, emb_dim=64):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, 256)
        self.fc2 = nn.Linear(256, emb_dim)

    def forward(self, x):
        f = self.fc2(F.relu(self.fc1(x)))
        f /= f.norm(dim=1, keepdim=True)
        return f


def triplet_step(model, opt, anchor, positive, negative, margin=0.2):
    opt.zero_grad()
    a, p, n = model(anchor), model(positive), model(negative)
    loss = F.triplet_margin_loss(a, p, n, margin=margin)
    loss.backward()
    opt.step()
    return loss.item()
