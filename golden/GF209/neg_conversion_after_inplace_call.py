# GF209 negative: a one-hot matrix filled by an in-place `scatter_`, with a trailing
# conversion whose result is dropped. The in-place call already changed `onehot`;
# the conversion of an already-float tensor returns the same tensor.
import torch


def one_hot(labels, classes):
    onehot = torch.zeros(labels.size(0), classes)
    onehot.scatter_(1, labels.view(-1, 1).long(), 1).float()
    return onehot


print(one_hot(torch.tensor([0, 2, 1]), 3))
