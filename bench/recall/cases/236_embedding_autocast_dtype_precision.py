"""Source: https://github.com/mahmoodlab/HEST/pull/124
Title: fix torch.amp.autocast
What went wrong: the patch-embedding loop wraps the encoder call in
`torch.cuda.amp.autocast(dtype=precision)`, the API deprecated since torch 2.4; every call warns
"`torch.cuda.amp.autocast(args...)` is deprecated" (the fix uses `torch.amp.autocast('cuda', ...)`).
runs: runs; torch 2.13 prints the FutureWarning for torch.cuda.amp.autocast (CUDA autocast disables itself on a CPU-only machine)
scope: documented
"""
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
precision = torch.float16
tiles = [torch.randn(4, 3, 16, 16) for _ in range(3)]
embeddings = []
encoder.eval()
for batch in tiles:
    with torch.inference_mode(), torch.cuda.amp.autocast(dtype=precision):  # expect: GF301
        embeddings.append(encoder(batch))
print(torch.cat(embeddings).shape)
