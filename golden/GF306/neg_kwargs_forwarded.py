# GF306 negative: the keyword arguments are forwarded; the flag may be in them.
from torch.utils.checkpoint import checkpoint


def run_block(block, x, **ckpt_kwargs):
    return checkpoint(block, x, **ckpt_kwargs)
