"""Source: https://github.com/mazzzystar/randomCNN-voice-transfer/issues/16
Title: can't optimize a non-leaf Tensor
What went wrong: the optimised spectrogram is created with `requires_grad=True` and then moved
with `.cuda()`, which returns a non-leaf copy; the optimizer rejects it on GPU.
runs: on a CUDA machine raises ValueError (can't optimize a non-leaf Tensor)
scope: documented
"""
import torch
import torch.nn as nn

cnn = nn.Conv2d(1, 32, (1, 11))
content_s = torch.randn(1, 1, 257, 100)
a_G_var = torch.randn(content_s.shape, requires_grad=True).cuda()  # expect: GF302
cnn = cnn.cuda()
optimizer = torch.optim.Adam([a_G_var], lr=0.002)

for epoch in range(10):
    optimizer.zero_grad()
    loss = (cnn(a_G_var) - cnn(content_s.cuda())).pow(2).mean()
    loss.backward()
    optimizer.step()
