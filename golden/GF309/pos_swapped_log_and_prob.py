"""The two arguments of a mutual-learning loss in each other's places: probabilities where kl_div
wants log-probabilities, and log-probabilities where it wants probabilities (the loss prints NaN)."""
import torch.nn.functional as F


def mutual_term(logits_a, logits_b):
    prob_a = F.softmax(logits_a, dim=-1)
    logprob_b = F.log_softmax(logits_b.detach(), dim=-1)
    return F.kl_div(prob_a, logprob_b, reduction="batchmean")
