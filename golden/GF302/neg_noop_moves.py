# GF302 negative: moves that do not copy. `.to("cpu")` and `.cpu()` of a CPU
# tensor and `.float()` of a float32 tensor return the leaf itself.
import torch

a = torch.randn(3, requires_grad=True).to("cpu")
b = torch.randn(3, requires_grad=True).cpu()
c = torch.randn(3, requires_grad=True).float()
