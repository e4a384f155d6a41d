"""Source: https://github.com/usc-isi/PipeEdge/pull/7
Title: runtime: use '__call__' instead of 'forward' for RPC
What went wrong: the pipeline runtime executes each model shard with `shard.forward(x)`; calling
`forward` directly skips the hooks `nn.Module.__call__` runs, so the profiling hook registered on
the shard never fires (the pull request switches to calling the module).
runs: runs; the registered forward hook is never called (the run prints 0 calls)
scope: documented
"""
import torch
import torch.nn as nn


class TransformerShard(nn.Module):
    def __init__(self, dim=16, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 2, 32, batch_first=True) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class StageRunner:
    def __init__(self):
        self.shard = TransformerShard()
        self.calls = 0
        self.shard.register_forward_hook(self._profile)

    def _profile(self, module, inputs, output):
        self.calls += 1

    def run(self, x):
        with torch.no_grad():
            return self.shard.forward(x)  # expect: GF305


runner = StageRunner()
for _ in range(3):
    runner.run(torch.randn(2, 5, 16))
print("hook calls:", runner.calls)
