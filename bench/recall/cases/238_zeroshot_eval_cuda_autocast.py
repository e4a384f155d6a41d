"""Source: https://github.com/LAION-AI/CLIP_benchmark/issues/136
Title: Warning fix: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead."
What went wrong: the zero-shot evaluation computes image and text embeddings under
`torch.cuda.amp.autocast()`, which newer PyTorch versions deprecate; every evaluation batch prints
the FutureWarning.
runs: runs; torch 2.13 prints the FutureWarning for torch.cuda.amp.autocast
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

image_encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16))
text_embeddings = F.normalize(torch.randn(5, 16), dim=-1)
dataloader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))) for _ in range(3)]
amp = True
correct = 0
for images, target in dataloader:
    with torch.no_grad(), torch.cuda.amp.autocast(enabled=amp):  # expect: GF301
        image_features = F.normalize(image_encoder(images), dim=-1)
        logits = 100.0 * image_features @ text_embeddings.t()
    correct += (logits.argmax(dim=1) == target).sum().item()
print("acc:", correct / 12)
