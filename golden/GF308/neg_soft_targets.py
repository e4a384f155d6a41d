# GF308 negative: a softmax of the teacher's logits is the *target* (second
# argument), which cross_entropy accepts as class probabilities.
import torch.nn.functional as F


def distill(student_logits, teacher_logits, T=2.0):
    return F.cross_entropy(student_logits / T, F.softmax(teacher_logits / T, dim=1))
