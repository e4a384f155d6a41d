# GF209 positive without a fix: the literal sizes fit the tensor's nine
# elements, so the reshape succeeds and its result is dropped: `t` keeps its
# 3 x 3 shape, which the lesson then prints as if it were 1 x 9.
import torch

t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
t.reshape(1, 9)
print(t.shape)
t.view(-1, 3)
print(t.shape)
