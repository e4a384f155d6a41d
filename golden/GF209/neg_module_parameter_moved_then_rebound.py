# GF209 negative: `model` is an nn.Module parameter; `.to(...)` on a module converts it in
# place, so the bare call is right. The later rebinding of the name to a converted copy
# must not make the earlier read look like a tensor.
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def make_ddp(model: torch.nn.Module, rank: int):
    model.to(rank)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return DDP(model, device_ids=[rank])
