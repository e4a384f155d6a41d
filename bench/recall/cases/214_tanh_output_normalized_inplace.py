"""Source: https://github.com/abhiskk/fast-neural-style/issues/12
Title: About adding Tanh() at the end of the model
What went wrong: after a Tanh is added as the last layer of the style-transfer network, the
perceptual loss normalises the generated batch with a helper that divides it in place
(`batch.div_(255.0)`); Tanh saved that output for its backward, so training raises the in-place
error (the fix makes the normalisation out of place).
runs: raises RuntimeError "... modified by an inplace operation ... output 0 of Tanh" in backward()
scope: documented
"""
import torch
import torch.nn as nn


IMAGENET_MEAN = torch.tensor([0.5, 0.45, 0.4]).view(1, 3, 1, 1)
IMAGENET_STD = torch.tensor([0.25, 0.22, 0.23]).view(1, 3, 1, 1)


def to_vgg_range(images):
    images = images.div_(255.0)  # expect: GF101
    return (images - IMAGENET_MEAN) / IMAGENET_STD


transformer = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
for p in features.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.Adam(transformer.parameters(), lr=1e-3)
x = torch.rand(2, 3, 16, 16) * 255
y = transformer(x)
loss = nn.functional.mse_loss(features(to_vgg_range(y)), features(to_vgg_range(x.clone())))
optimizer.zero_grad()
loss.backward()
optimizer.step()
