# GF210 negative: freezing during training done where it does what it says:
# before the forward pass of the iteration (the step then sees no gradient for
# the frozen parameters), after the step, or of a module the stepping optimizer
# does not hold.
import torch
import torch.nn as nn

emb = nn.Embedding(50, 8)
clf = nn.Sequential(emb, nn.Flatten(), nn.Linear(8 * 3, 2))
other = nn.Linear(4, 4)
opt = torch.optim.SGD(clf.parameters(), lr=0.1)

for it in range(8):
    if it == 3:
        for p in emb.parameters():
            p.requires_grad = False
    ids, labels = torch.randint(0, 50, (4, 3)), torch.randint(0, 2, (4,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(clf(ids), labels)
    loss.backward()
    other.requires_grad_(False)
    opt.step()
    if it == 5:
        clf.requires_grad_(False)
