"""Source: https://github.com/eriklindernoren/PyTorch-GAN/blob/master/implementations/acgan/acgan.py
Title: (held-out survey, bench/HELDOUT.md recall) AC-GAN discriminator's class head
What went wrong: the discriminator returns (validity, class probabilities) with the class
head ending in nn.Softmax, and the unpacked probabilities go to CrossEntropyLoss.
runs: trains, with the class loss saturated near log(C)
scope: documented
"""
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.blocks = nn.Sequential(nn.Linear(32, 64), nn.LeakyReLU(0.2))
        self.adv = nn.Sequential(nn.Linear(64, 1), nn.Sigmoid())
        self.aux = nn.Sequential(nn.Linear(64, n_classes), nn.Softmax(dim=1))

    def forward(self, img):
        h = self.blocks(img)
        validity = self.adv(h)
        label = self.aux(h)
        return validity, label


adversarial_loss = nn.BCELoss()
auxiliary_loss = nn.CrossEntropyLoss()
disc = Discriminator()
opt = torch.optim.Adam(disc.parameters(), lr=2e-4)

if __name__ == "__main__":
    imgs, labels = torch.randn(8, 32), torch.randint(0, 10, (8,))
    real_pred, real_aux = disc(imgs)
    d_loss = adversarial_loss(real_pred, torch.ones(8, 1)) + auxiliary_loss(real_aux, labels)  # expect: GF308
    opt.zero_grad()
    d_loss.backward()
    opt.step()
