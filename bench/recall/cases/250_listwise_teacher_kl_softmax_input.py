"""Source: https://github.com/sebastian-hofstaetter/matchmaker/issues/18
Title: typo in KLDivTeacherList?
What went wrong: a listwise distillation loss hands the student's softmax scores to KLDivLoss as
its input; KLDivLoss reads its input as log-probabilities, so the value is not a divergence and the
student is pulled toward the teacher's top document instead of the teacher's ranking distribution.
runs: trains without error; the loss goes negative on some batches
scope: documented (a criterion kept as a submodule, `self.kl`, given `scores.softmax(-1)`)
"""
import torch
import torch.nn as nn


class TeacherListLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.kl = nn.KLDivLoss(reduction="batchmean")

    def forward(self, student_scores, teacher_scores):
        return self.kl(student_scores.softmax(-1), teacher_scores.softmax(-1))  # expect: GF309


class Ranker(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, docs):
        return self.score(docs).squeeze(-1)


if __name__ == "__main__":
    ranker, loss_fn = Ranker(), TeacherListLoss()
    opt = torch.optim.Adam(ranker.parameters(), lr=1e-3)
    for _ in range(3):
        docs, teacher = torch.randn(4, 8, 12), torch.randn(4, 8)
        loss = loss_fn(ranker(docs), teacher)
        opt.zero_grad()
        loss.backward()
        opt.step()
