# GF301 negative: the current decorators (torch.amp.custom_fwd with
# device_type) and a version fallback that keeps the old one for releases
# without torch.amp.custom_fwd.
import torch

try:
    from torch.amp import custom_fwd as _fwd

    fwd_fp32 = _fwd(device_type="cuda", cast_inputs=torch.float32)
except ImportError:
    from torch.cuda.amp import custom_fwd as _old_fwd

    fwd_fp32 = _old_fwd(cast_inputs=torch.float32)


class Double(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        return grad * 2


class Triple(torch.autograd.Function):
    @staticmethod
    @fwd_fp32
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


x = torch.randn(4, requires_grad=True)
(Double.apply(x).sum() + Triple.apply(x).sum()).backward()
