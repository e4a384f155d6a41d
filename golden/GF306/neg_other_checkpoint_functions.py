# GF306 negative: other libraries' checkpoint functions and checkpoint files.
import deepspeed
import torch
from fairscale.nn.checkpoint import checkpoint_wrapper


def checkpoint(state, path):
    torch.save(state, path)


def block_forward(block, x):
    return deepspeed.checkpointing.checkpoint(block, x)


def save(model, path):
    checkpoint({"model": model.state_dict()}, path)
    return checkpoint_wrapper(model)
