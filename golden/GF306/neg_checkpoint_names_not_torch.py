# GF306 negative: the file imports torch's `checkpoint`, but the calls below see
# another `checkpoint`: a function of the file that saves training state (it
# replaces the import at module level), a parameter, a local variable picked
# from a table of implementations, a relative import, and DeepSpeed's function
# chosen by an `if` (which of the two runs is decided at run time).
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

USE_DEEPSPEED = False

if USE_DEEPSPEED:
    from deepspeed.checkpointing import checkpoint as activation_checkpoint
else:
    from torch.utils.checkpoint import checkpoint as activation_checkpoint


def checkpoint(state, path):
    torch.save(state, path)


def save_epoch(model, epoch):
    checkpoint({"model": model.state_dict(), "epoch": epoch}, f"epoch{epoch}.pt")


def run_block(block, x, checkpoint=None):
    return checkpoint(block, x) if checkpoint is not None else block(x)


IMPLEMENTATIONS = {"plain": lambda fn, *args: fn(*args)}


def run_with(kind, block, x):
    checkpoint = IMPLEMENTATIONS[kind]
    return checkpoint(block, x)


def run_local(block, x):
    from .activations import checkpoint

    return checkpoint(block, x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Linear(8, 8)

    def forward(self, x):
        return activation_checkpoint(self.block, x)
