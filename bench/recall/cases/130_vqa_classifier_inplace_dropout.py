"""Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
Title: RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [512, 2048]], which is output 0 of ReluBackward0, is at version 1;
What went wrong: the answer classifier stacks a ReLU and then a dropout built with
`inplace=True`; the dropout rewrites the ReLU output that ReLU kept for its backward, and
the fix was `inplace=False`.
runs: raises RuntimeError (output 0 of ReluBackward0 ... is at version 1) in backward()
scope: documented
"""
import torch
import torch.nn as nn


class AnswerClassifier(nn.Module):
    def __init__(self, in_dim=24, hid_dim=48, n_answers=10, dropout=0.5):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hid_dim)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(dropout, inplace=True)
        self.fc2 = nn.Linear(hid_dim, n_answers)

    def forward(self, joint):
        h = self.relu(self.fc1(joint))
        h = self.drop(h)  # expect: GF101
        return self.fc2(h)


if __name__ == "__main__":
    clf = AnswerClassifier()
    clf.train()
    logits = clf(torch.randn(8, 24))
    loss = nn.functional.binary_cross_entropy_with_logits(logits, torch.rand(8, 10))
    loss.backward()
