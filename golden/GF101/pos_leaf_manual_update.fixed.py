# GF101 positive: a hand-written gradient step on leaves made with requires_grad=True, outside
# no_grad. The dict only holds the same two tensors (for a graph plot); what breaks is the leaf
# itself: autograd refuses an in-place op on a leaf that requires grad. The fix runs each update
# under torch.no_grad(), so the names stay leaves and the next step's `.grad` is filled again
# (rewriting `w = w - lr * w.grad` instead would leave a non-leaf whose .grad stays None).
import torch

w = torch.randn(2, 1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
tensors = {"w": w, "bias": bias}
inputs = torch.randn(16, 2)
targets = inputs @ torch.tensor([[2.0], [-1.0]]) + 0.5
step_size = 0.1

for epoch in range(3):
    prediction = inputs @ w + bias
    loss = ((prediction - targets) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= step_size * w.grad
    with torch.no_grad():
        bias -= step_size * bias.grad
    w.grad.zero_()
    bias.grad.zero_()
