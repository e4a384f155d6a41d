# GF304 positive: `forward` builds a convolution and a norm layer on the fly
# and calls them at once. Nothing keeps them, so the model registers no
# parameter for them: the optimizer gets nothing to train there, and every
# forward pass draws new random weights.
import torch
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, out_ch):
        super().__init__()
        self.out_ch = out_ch
        self.act = nn.SiLU()

    def forward(self, img):
        h = nn.Conv2d(img.shape[1], self.out_ch, 3, padding=1).to(img.device)(img)
        h = nn.GroupNorm(4, self.out_ch)(h)
        return self.act(h)


if __name__ == "__main__":
    stem = Stem(8)
    print(len(list(stem.parameters())))
