# GF209 negative: `.to()` / `.cuda()` on modules converts them in place, so a
# bare call is fine. `model.eval()` returns the module; torch's observer and
# other torch classes are modules or objects, not tensors; a model loaded from
# a hub is of unknown type.
import torch
from torch import quantization


def calibrate(w):
    observer = quantization.observer.MinMaxObserver()
    observer.to(device=w.device)
    observer(w)
    return observer.calculate_qparams()


def load_lm():
    lm = torch.hub.load("owner/repo", "lm")
    lm.eval().cuda()
    return lm
