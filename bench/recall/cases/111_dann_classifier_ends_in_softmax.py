"""Source: https://github.com/NaJaeMin92/pytorch-DANN/issues/7
Title: Regarding softmax layer
What went wrong: the label classifier (and the domain discriminator) of a domain-adversarial
network end in a softmax layer while the training loss is CrossEntropyLoss, which applies
log-softmax itself; the reporter found the models hard to train, and the maintainer removed
the softmax layers.
runs: trains; the loss sees probabilities, so its gradients are much smaller than with logits
scope: documented
"""
import torch
import torch.nn as nn


class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 48), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(48, 24), nn.ReLU(), nn.Linear(24, 10), nn.Softmax(dim=1))

    def forward(self, h):
        return self.layer(h)


def train(epochs=2):
    extractor, classifier = Extractor(), Classifier()
    params = list(extractor.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    class_criterion = nn.CrossEntropyLoss()
    source = [(torch.randn(8, 32), torch.randint(0, 10, (8,))) for _ in range(3)]
    for epoch in range(epochs):
        for images, labels in source:
            optimizer.zero_grad()
            class_pred = classifier(extractor(images))
            class_loss = class_criterion(class_pred, labels)  # expect: GF308
            class_loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train()
