"""Source: https://github.com/imatif17/Prototype-Mean-Teacher/issues/14
Title: Why detach prototypes in "prototype_all" branch?
What went wrong: the prototype loss detaches the class prototypes in place (`detach_()`) right
after the alignment term and before the contrastive term that is built from the same prototypes;
the contrastive loss added to the total therefore carries no gradient and never trains the model
(the author agreed the detach should come after it).
runs: prints requires_grad False for the contrastive term; then, with torch 2.13, backward() raises RuntimeError "Trying to use a saved tensor that has been detached in-place" (the alignment term saved the prototypes); on the reporter's version the contrastive term silently carried no gradient
scope: extension
"""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

backbone = nn.Linear(12, 6)
optimizer = torch.optim.SGD(backbone.parameters(), lr=0.01)
feats_s, feats_t = torch.randn(16, 12), torch.randn(16, 12)
labels = torch.arange(16) % 4
emb_s, emb_t = backbone(feats_s), backbone(feats_t)
prototype_s = torch.stack([emb_s[labels == c].mean(0) for c in range(4)])
prototype_t = torch.stack([emb_t[labels == c].mean(0) for c in range(4)])
loss_pro = -F.cosine_similarity(prototype_s, prototype_t).abs().mean()
prototype_s.detach_()  # expect: GF307
prototype_t.detach_()
loss_c = 0
for i, j in itertools.combinations(range(4), 2):
    loss_c += F.cosine_similarity(prototype_s[i].view(1, -1), prototype_s[j].view(1, -1)).abs().mean()
loss_c = loss_c / 6
print("contrastive term requires grad:", loss_c.requires_grad)
loss = loss_pro + loss_c
optimizer.zero_grad()
loss.backward()
optimizer.step()
