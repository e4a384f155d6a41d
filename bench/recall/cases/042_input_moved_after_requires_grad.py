"""Source: https://github.com/Maghoumi/pytorch-softdtw-cuda/issues/25
Title: Gradients are gone when moving the code to CUDA
What went wrong: the example creates `x` with requires_grad=True and then rebinds
`x = x.to(device)`; on GPU `x` is now a non-leaf copy and `x.grad` stays empty.
runs: on a CUDA machine x.grad is None with a "non-leaf Tensor" warning
scope: documented
"""
import torch

device = torch.device("cuda")
batch_size, len_x, len_y, dims = 8, 15, 12, 5
x = torch.rand((batch_size, len_x, dims), requires_grad=True)
y = torch.rand((batch_size, len_y, dims))
x = x.to(device)  # expect: GF302
y = y.to(device)

d = torch.cdist(x, y)
loss = d.min(dim=2).values.sum(dim=1)
loss.mean().backward()
print(x.grad)
