"""Source: https://github.com/pytorch/pytorch/issues/12923
Title: How to still compute grad after clone to other tensor?
What went wrong: the inputs are written as `torch.randn(4, requires_grad=True).cuda()`, so the
names hold the CUDA copies rather than the leaves; the clone `z` gets a gradient (it retains it)
but `x.grad` stays None, which is what the reporter asked about.
runs: on a CUDA machine prints `x.grad= None` next to a filled `z.grad`; on CPU `.to("cpu")` returns the leaf itself, so `x.grad` is filled too
scope: documented
"""
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(4, requires_grad=True).to(device)  # expect: GF302
y = torch.randn(4, requires_grad=True).to(device)
z = torch.clone(x)
z.retain_grad()
h = (z + y) * z
target = torch.randn(4, device=device)
loss = (target - h).pow(2).sum()
loss.backward()
print("x.grad=", x.grad)
print("z.grad=", z.grad)
