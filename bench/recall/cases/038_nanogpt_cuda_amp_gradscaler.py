"""Source: https://github.com/karpathy/nanoGPT/issues/635
Title: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated.
What went wrong: the training script builds its scaler with the deprecated
`torch.cuda.amp.GradScaler(enabled=...)`, which now emits a FutureWarning.
runs: trains but warns (FutureWarning: torch.cuda.amp.GradScaler is deprecated)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

dtype = "float16"
device_type = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Embedding(65, 32), nn.Linear(32, 65)).to(device_type)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))  # expect: GF301
ctx = torch.amp.autocast(device_type=device_type, dtype=torch.float16, enabled=device_type == "cuda")

for it in range(3):
    X = torch.randint(0, 65, (4, 16), device=device_type)
    Y = torch.randint(0, 65, (4, 16), device=device_type)
    with ctx:
        logits = model(X)
        loss = F.cross_entropy(logits.view(-1, 65), Y.view(-1))
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
