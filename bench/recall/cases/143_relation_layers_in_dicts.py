"""Source: https://github.com/pytorch/pytorch/issues/632
Title: parameters not registered in module
What went wrong: a module builds one `nn.Linear` and a pair of weights per relation type and
stores them in ordinary dicts keyed by relation, so none of them are registered with the module:
`parameters()`, `.cuda()` and `state_dict()` all miss them.
runs: only the output layer's 2 parameters are registered; the 10 relation layers are not
scope: documented
"""
import torch
import torch.nn as nn


class RelationScorer(nn.Module):
    def __init__(self, num_features=8, num_rel=4, n_relations=10):
        super().__init__()
        self.list_relations = {}  # expect: GF304
        for rel in range(n_relations):
            self.list_relations[rel] = nn.Linear(num_features, num_rel)
        self.out = nn.Linear(num_rel, 1)

    def forward(self, x, rel):
        return self.out(torch.relu(self.list_relations[rel](x)))


if __name__ == "__main__":
    scorer = RelationScorer()
    print(len(list(scorer.parameters())), "registered tensors")
    print(scorer(torch.randn(3, 8), rel=2).shape)
