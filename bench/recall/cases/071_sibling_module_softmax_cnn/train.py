"""Source: https://github.com/musikalkemist/pytorchforaudio/blob/main/09%20Training%20urban%20sound%20classifier/train.py
Title: (held-out survey, bench/HELDOUT3.md recall) urban sound classifier training script
What went wrong: the classifier imported from the sibling module ends its forward in
nn.Softmax, and the training script feeds its output to nn.CrossEntropyLoss, so the scores
are softmaxed twice; the model reaches the loss through two helpers' parameters.
runs: trains on doubly-softmaxed scores (the loss saturates near log(10))
scope: extension (the model class is defined in another file of the project)
"""
import torch
from torch import nn

from audio_cnn import SoundClassifier


def train_one_epoch(model, loader, loss_fn, optimiser):
    for spec, target in loader:
        prediction = model(spec)
        loss = loss_fn(prediction, target)  # expect: GF308
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()


def train(model, loader, loss_fn, optimiser, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, loader, loss_fn, optimiser)


if __name__ == "__main__":
    loader = [(torch.randn(4, 1, 16, 16), torch.randint(0, 10, (4,))) for _ in range(3)]
    net = SoundClassifier()
    criterion = nn.CrossEntropyLoss()
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    train(net, loader, criterion, optimiser, epochs=2)
