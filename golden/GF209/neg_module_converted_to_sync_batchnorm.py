# GF209 negative: `convert_sync_batchnorm` returns the module it is given (its BatchNorm layers
# replaced), so `model.cuda(gpu)` afterwards moves a module, in place.
import torch
import torch.nn as nn


def wrap(gpu: int):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda(gpu)
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
