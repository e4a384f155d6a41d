# GF301 positive: a custom autograd.Function (a sparsemax-style activation)
# decorated with the deprecated torch.cuda.amp.custom_fwd / custom_bwd. Each
# decoration emits a FutureWarning in torch 2.13; the current API is
# torch.amp.custom_fwd(device_type="cuda"), whose device_type is keyword-only.
import torch
from torch.cuda.amp import custom_bwd, custom_fwd


class ClampedIdentity(torch.autograd.Function):
    @staticmethod
    @custom_fwd
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return x.clamp(-limit, limit)

    @staticmethod
    @custom_bwd
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= ctx.limit), None


class HalfSafeScale(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad):
        return grad * 2


x = torch.randn(4, requires_grad=True)
(ClampedIdentity.apply(x, 0.5).sum() + HalfSafeScale.apply(x).sum()).backward()
