# GF101 negative: a lesson computes a blur with a fixed kernel, backpropagates it, then bumps the
# kernel in place and builds a fresh graph from the new kernel before the next backward(). The graph
# that saved the old kernel was walked and freed by the first backward(); the second backward() walks
# only the new graph, which saved the kernel after the change, so nothing raises.
import torch
import torch.nn.functional as F

image = torch.rand(1, 1, 6, 6, requires_grad=True)
blur = torch.full((1, 1, 3, 3), 1.0 / 9.0)

smoothed = F.conv2d(image, blur)
smoothed.mean().backward()
print("grad with the first kernel:", image.grad.abs().sum().item())

blur += 0.5
smoothed = F.conv2d(image, blur)
smoothed.mean().backward()
print("grad after both passes:", image.grad.abs().sum().item())
