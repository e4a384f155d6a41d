"""Source: https://github.com/taesunwhang/UMS-ResSel/issues/3
Title: Maybe wrong grad clipping
What went wrong: in the post-training loop the gradient-norm clip is placed after
`optimizer.step()`, so it never limits the update; the author moved it before the step.
runs: trains; the clip runs on gradients that were already applied
scope: documented
"""
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Embedding(200, 32), nn.Flatten(), nn.Linear(32 * 10, 2))
optimizer = torch.optim.AdamW(encoder.parameters(), lr=3e-5)
max_grad_norm = 1.0

for epoch in range(2):
    for step in range(4):
        ids = torch.randint(0, 200, (8, 10))
        labels = torch.randint(0, 2, (8,))
        loss = nn.functional.cross_entropy(encoder(ids), labels)
        loss.backward()
        optimizer.step()
        nn.utils.clip_grad_norm_(encoder.parameters(), max_grad_norm)  # expect: GF206
        optimizer.zero_grad()
