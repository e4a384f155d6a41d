# GF305 negative: scripting, tracing and export code calls forward on purpose.
import torch
import torch.nn as nn


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Linear(4, 2)

    @torch.jit.export
    def infer(self, x):
        return self.model.forward(x)


def export(model, x):
    torch.onnx.export(model, (x,), "model.onnx")
    return model.forward(x)


net = nn.Linear(4, 2)
scripted = torch.jit.script(net)
model = torch.jit.trace(net, torch.randn(1, 4))
y = model.forward(torch.randn(1, 4))
