# GF302 positive: a dtype change copies too. The saliency map reads
# `inputs.grad`, which stays None for the float64 copy. The fix keeps the
# float32 draw and its cast (`torch.rand(5, 3).double().requires_grad_()`):
# creating the tensor in float64 directly would draw different numbers.
import torch


def saliency(model):
    inputs = torch.rand(5, 3, requires_grad=True).double()
    model(inputs).sum().backward()
    return inputs.grad.abs()
