"""Source: https://github.com/pytorch/pytorch/issues/74158
Title: torch.no_grad() removes requires_grad from weight tensor while updating it by non-compound-operation
What went wrong: a hand-written linear regression updates its weight with `w = w - lr * w.grad`
inside `torch.no_grad()`; that binds `w` to a new tensor that does not require grad, so the next
line's `w.grad.zero_()` fails (the compound `w -= lr * w.grad` updates the leaf in place).
runs: raises AttributeError ('NoneType' object has no attribute 'zero_') after the first update
scope: extension
"""
import torch

X = torch.tensor([1, 2, 3, 4], dtype=torch.float32)
Y = torch.tensor([2, 4, 6, 8], dtype=torch.float32)
w = torch.tensor(0.0, dtype=torch.float32, requires_grad=True)
lr = 0.01
for epoch in range(1, 11):
    y_pred = w * X
    loss = ((y_pred - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w = w - lr * w.grad  # expect: GF213
    w.grad.zero_()
print(w)
