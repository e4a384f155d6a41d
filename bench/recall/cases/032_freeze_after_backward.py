"""Source: https://github.com/neuralmagic/sparseml/issues/965
Title: TrainableParamsModifier doesn't freeze params
What went wrong: the freeze (`requires_grad = False`) is applied only once training is under
way, after backward already filled `.grad` and the optimizer holds the params, so they keep
being updated.
runs: trains but the "frozen" embedding keeps changing (its .grad is never cleared)
scope: extension (params frozen after the optimizer was built and after backward)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

embed = nn.Embedding(100, 16)
model = nn.Sequential(embed, nn.Flatten(), nn.Linear(16 * 4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
freeze_at = 2

for step in range(6):
    tokens, labels = torch.randint(0, 100, (8, 4)), torch.randint(0, 2, (8,))
    optimizer.zero_grad(set_to_none=False)
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    if step == freeze_at:
        for p in embed.parameters():
            p.requires_grad = False  # expect: GF210
    optimizer.step()
