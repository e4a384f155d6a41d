# GF210 positive (detect only): the embedding is frozen mid-training, but between
# backward() and the step. Its parameters already hold this batch's gradient, so
# the step right after still updates them, and zero_grad(set_to_none=False)
# leaves them a zero .grad, so momentum keeps moving them on every later step.
import torch
import torch.nn as nn

emb = nn.Embedding(50, 8)
clf = nn.Sequential(emb, nn.Flatten(), nn.Linear(8 * 3, 2))
opt = torch.optim.SGD(clf.parameters(), lr=0.1, momentum=0.9)

for it in range(8):
    ids, labels = torch.randint(0, 50, (4, 3)), torch.randint(0, 2, (4,))
    opt.zero_grad(set_to_none=False)
    loss = nn.functional.cross_entropy(clf(ids), labels)
    loss.backward()
    if it == 3:
        emb.requires_grad_(False)
    opt.step()
