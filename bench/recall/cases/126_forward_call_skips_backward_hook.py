"""Source: https://github.com/pytorch/pytorch/issues/117925
Title: Module full backward hook does not work (perhaps because input does not require grad)
What went wrong: a module with a full backward hook is run as `model.forward(...)`; the hook
is never called, because hooks are run by `model(...)` (`__call__`), which the direct call
bypasses. With `model(...)` it works.
runs: the parameter gets its gradient, the hook prints nothing
scope: documented
"""
import torch
import torch.nn as nn


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.some_param = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        return self.some_param * x


def full_backward_hook(module, grad_input, grad_output):
    print("full_backward_hook called with", module, grad_input, grad_output)


model = MyModule()
model.register_full_backward_hook(full_backward_hook)
out = model.forward(torch.tensor(5.0))  # expect: GF305
out.backward()
print("model.some_param.grad:", model.some_param.grad)
