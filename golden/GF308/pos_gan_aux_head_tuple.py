# GF308 positive: an auxiliary-classifier GAN discriminator returns
# (real/fake score, class head). The class head ends in nn.Softmax, and the
# unpacked class output goes to CrossEntropyLoss, which applies log_softmax
# again. The score head's sigmoid goes to BCELoss, which is right.
import torch
import torch.nn as nn


class AuxDiscriminator(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(64, 128), nn.LeakyReLU(0.2))
        self.score = nn.Sequential(nn.Linear(128, 1), nn.Sigmoid())
        self.classes = nn.Sequential(nn.Linear(128, n_classes), nn.Softmax(dim=1))

    def forward(self, img):
        h = self.features(img)
        return self.score(h), self.classes(h)


class PatchClassifier(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.trunk = nn.Linear(64, 128)
        self.out = nn.Sequential(nn.Linear(128, n_classes), nn.Softmax(dim=1))

    def forward(self, img):
        label = self.out(self.trunk(img))
        return label


disc = AuxDiscriminator()
clf = PatchClassifier()
adv_loss = nn.BCELoss()
aux_loss = nn.CrossEntropyLoss()
opt = torch.optim.Adam(list(disc.parameters()) + list(clf.parameters()), lr=2e-4)
for _ in range(2):
    imgs, labels = torch.randn(8, 64), torch.randint(0, 10, (8,))
    score, cls_probs = disc(imgs)
    loss = adv_loss(score, torch.ones(8, 1)) + aux_loss(cls_probs, labels)
    loss = loss + aux_loss(clf(imgs), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
