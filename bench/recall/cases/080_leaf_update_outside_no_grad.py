"""Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308
Title: Leaf variable was used in an inplace operation
What went wrong: a weight made with requires_grad=True is updated by hand with `-=` after
backward(), with grad mode on: autograd refuses an in-place op on a leaf that requires grad;
the update belongs under torch.no_grad().
runs: raises RuntimeError (a leaf Variable that requires grad is being used in an in-place operation)
scope: documented
"""
import torch

weight = torch.randn(3, 1, requires_grad=True)
features = torch.randn(20, 3)
target = features @ torch.tensor([[1.0], [-2.0], [0.5]])
rate = 0.05

for step in range(5):
    loss = ((features @ weight - target) ** 2).mean()
    loss.backward()
    weight -= rate * weight.grad  # expect: GF101
    weight.grad.zero_()
