# GF210 negative: freezes that come after the optimizer but leave it something
# to train, or happen once training is under way. The encoder is frozen after
# an optimizer over the head was built; an optimizer has trained before its
# parameters are frozen for export; a freeze under a flag or at a later epoch
# is a choice made at run time.
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_head(encoder, head, loader):
    head_opt = torch.optim.Adam(head.parameters(), lr=1e-3)
    for p in encoder.parameters():
        p.requires_grad = False
    for x, y in loader:
        head_opt.zero_grad()
        F.cross_entropy(head(encoder(x)), y).backward()
        head_opt.step()


def train_then_export(encoder, head, loader):
    enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
    for x, y in loader:
        enc_opt.zero_grad()
        F.cross_entropy(head(encoder(x)), y).backward()
        enc_opt.step()
    encoder.requires_grad_(False)
    return encoder


def maybe_frozen(encoder, freeze_encoder):
    flag_opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
    if freeze_encoder:
        for p in encoder.parameters():
            p.requires_grad = False
    return flag_opt


def frozen_later(encoder, head, loader):
    late_opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
    for epoch in range(10):
        if epoch == 5:
            for p in encoder.parameters():
                p.requires_grad = False
        for x, y in loader:
            late_opt.zero_grad()
            F.cross_entropy(head(encoder(x)), y).backward()
            late_opt.step()


def frozen_under_flag_first(model, freeze):
    if freeze:
        model.requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return opt
