# GF305 negative: receivers not shown to be an nn.Module. A parameter without an
# annotation, an object whose class comes from another file, a TorchScript
# program loaded from disk, a plain object's attribute given by the caller, and a
# scripted function: each has a `forward` method, but calling the object itself
# may raise TypeError (a plain class defines no `__call__`), so `obj(x)` is no fix.
import torch

from .pipelines import FeaturePipeline


def run_model(model, batch):
    return model.forward(batch)


def featurize(raw):
    pipeline = FeaturePipeline()
    return pipeline.forward(raw)


def load_program(path):
    return torch.jit.load(path)


def serve(path, x):
    program = load_program(path)
    return program.forward(x)


class Predictor:
    def __init__(self, path, encoder):
        self.model = torch.jit.load(path)
        self.encoder = encoder

    def predict(self, x):
        return self.model.forward(self.encoder.forward(x))


def scale(x):
    return x * 2


scaled = torch.jit.script(scale)


def apply_scale(x):
    return scaled.forward(x)
