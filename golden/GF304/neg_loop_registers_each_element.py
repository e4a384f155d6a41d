# GF304 negative: each module the loop keeps in the plain list is registered in
# the same loop under its own name (`setattr`, `add_module`, `register_module`,
# or a method that calls one of them), or by a loop over the finished list.
# parameters() and state_dict() already hold them; `nn.ModuleList` would add a
# second key for every weight.
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, width=8, depth=3):
        super().__init__()
        self.fcs = []
        for i in range(depth):
            layer = nn.Linear(width, width)
            setattr(self, f"fc{i}", layer)
            self.fcs.append(layer)
        self.norms = []
        for i in range(depth):
            norm = nn.LayerNorm(width)
            self.add_module(str(i), norm)
            self.norms += [norm]
        self.gates = {}
        for name in ("a", "b"):
            gate = nn.Linear(width, 1)
            self.register_module(f"gate_{name}", gate)
            self.gates[name] = gate
        self.skips = []
        for i in range(depth):
            skip = nn.Linear(width, width)
            self._keep(f"skip{i}", skip)
            self.skips.append(skip)
        self.heads = [nn.Linear(width, 2) for _ in range(2)]
        for i, head in enumerate(self.heads):
            setattr(self, f"head{i}", head)
        self.extras = [nn.Linear(width, width) for _ in range(2)]
        [self.add_module(f"extra{i}", m) for i, m in enumerate(self.extras)]

    def _keep(self, name, module):
        self.add_module(name, module)

    def forward(self, x):
        for fc, norm, skip, extra in zip(self.fcs, self.norms, self.skips, self.extras):
            x = norm(fc(x)) + skip(x) + extra(x)
        x = x * self.gates["a"](x) + self.gates["b"](x)
        return sum(head(x) for head in self.heads)
