# GF102 negative: PSNR / visualisation code that copies before in-place
# post-processing (`.detach().clone()` and `.clone().detach()`), so the
# in-place ops touch private copies only.
import torch


def psnr(pred, target, max_val=1.0):
    p = pred.detach().clone()
    p.clamp_(0.0, max_val)
    mse = torch.mean((p - target) ** 2)
    return 10 * torch.log10(max_val ** 2 / mse)


def to_uint8_grid(batch, mean=0.5, std=0.5):
    imgs = batch.clone().detach()
    imgs.mul_(std)
    imgs.add_(mean)
    imgs.clamp_(0, 1)
    return (imgs * 255).round().byte()


def log_step(writer, step, pred, target):
    writer.add_scalar("psnr", psnr(pred, target).item(), step)
    writer.add_images("pred", to_uint8_grid(pred), step)
