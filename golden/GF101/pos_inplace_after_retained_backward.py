# GF101 positive: the first backward() keeps its graph (retain_graph=True) to report a gradient norm,
# then the gates are scaled in place and the same loss is backpropagated again through the kept graph,
# whose sigmoid node saved the gates: backward() raises "modified by an inplace operation". A backward()
# that keeps its graph does not excuse the write.
import torch


def two_passes(n=8):
    features = torch.randn(n, 3, requires_grad=True)
    gates = torch.sigmoid(features)
    score = (gates * 2.0).sum()
    score.backward(retain_graph=True)
    first = features.grad.norm().item()
    gates.mul_(0.5)
    score.backward()
    return first, features.grad.norm().item()


if __name__ == "__main__":
    print(two_passes())
