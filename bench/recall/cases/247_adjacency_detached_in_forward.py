"""Source: https://github.com/queenie88/A-GCN/issues/4
Title: Question about gradient flow
What went wrong: the graph-convolution head builds an adaptive adjacency from two learned
projections (`W_phi`, `W_theta`) of the label embeddings and then `.detach()`es it before the
GCN layers use it; the only path from the loss to the two projections is cut, so they never
train (the authors confirmed and removed the detach).
runs: trains; after backward W_phi's and W_theta's .grad are None (the run prints them)
scope: extension
notes: left (branch r13). A detach in `forward` of a value built from submodules used nowhere else is also how momentum and target encoders are written on purpose (MoCo, BYOL: `k = self.encoder_k(x).detach()`, updated by EMA elsewhere, often in another file); the tree shows neither intent here.
"""
import torch
import torch.nn as nn


class AdaptiveGCNHead(nn.Module):
    def __init__(self, num_classes=5, in_dim=8, out_dim=16):
        super().__init__()
        self.W_phi = nn.Linear(in_dim, 8, bias=False)
        self.W_theta = nn.Linear(in_dim, 8, bias=False)
        self.gc1 = nn.Linear(in_dim, out_dim)
        self.gc2 = nn.Linear(out_dim, out_dim)

    def forward(self, feature, label_emb):
        adj = torch.softmax(self.W_phi(label_emb) @ self.W_theta(label_emb).t(), dim=-1)
        adj = adj.detach()  # expect: GF307
        x = torch.relu(adj @ self.gc1(label_emb))
        x = adj @ self.gc2(x)
        return feature @ x.t()


head = AdaptiveGCNHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
feature, label_emb = torch.randn(4, 16), torch.randn(5, 8)
loss = nn.functional.multilabel_soft_margin_loss(head(feature, label_emb), torch.rand(4, 5).round())
loss.backward()
optimizer.step()
print(head.W_phi.weight.grad, head.W_theta.weight.grad)
