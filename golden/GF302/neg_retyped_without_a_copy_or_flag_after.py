# GF302 negative next to the retyped-factory positive: a conversion to the factory's own type
# (float32 to FloatTensor, `.type_as()` a float32 tensor) returns the tensor itself; the flag
# set after the conversion makes the result the leaf; and a conversion to a type handed in
# by the caller is not shown to copy.
import torch

Same = torch.FloatTensor
reference = torch.randn(8, 3)


def fit(target_type):
    a = torch.zeros(3, requires_grad=True).type(Same)
    b = torch.zeros(3, requires_grad=True).type_as(reference)
    c = torch.zeros(3).type(torch.DoubleTensor).requires_grad_()
    d = torch.zeros(3, requires_grad=True).type(target_type)
    opt = torch.optim.SGD([a, b, c, d], lr=0.1)
    loss = (reference @ a).sum() + (reference @ b).sum() + (reference.double() @ c).sum() + d.sum()
    loss.backward()
    opt.step()
    return a, b, c, d


if __name__ == "__main__":
    fit(torch.FloatTensor)
    print("ok")
