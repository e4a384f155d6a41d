"""Fixtures for gradfix's verifier: how to build a unit it cannot build alone.

For a module class X, `fixture_X(mod)` returns `(instance, inputs)`; `mod` is the
loaded original or rewritten file, so build the instance from `mod.X`.
"""
import torch


def fixture_EmbeddingNetL2(mod):
    return mod.EmbeddingNetL2(in_features=10), (torch.randn(4, 10),)
