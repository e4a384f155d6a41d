# GF302 negative: the batch is moved first and the flag is set on the moved tensor,
# so the name holds the leaf; and a tensor whose flag is never switched on is moved
# freely.
import torch

device = torch.device("cuda")
x = torch.rand(2, 5)
x = x.to(device)
x.requires_grad = True
y = torch.rand(2, 5)
y = y.to(device)
(x * y).sum().backward()
print(x.grad)
