"""Creating the CUDA context up front: `torch.zeros(1).cuda()` is run for its effect.

The receiver is a tensor made in the statement itself, so nothing the program keeps stays on the CPU
when the result is dropped. (A tensor held in a name and moved without rebinding is still reported.)
"""
import torch


def init_device(gpu: bool):
    if gpu and torch.cuda.is_available():
        torch.zeros(1).cuda()
        torch.empty(2, device="cpu").float().cuda()

