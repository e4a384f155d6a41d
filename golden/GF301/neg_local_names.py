# GF301 negative: a local `autocast` and `GradScaler` that are not torch's.
from contextlib import nullcontext as autocast


class GradScaler:
    def scale(self, loss):
        return loss


scaler = GradScaler()


def forward_pass(model, x):
    with autocast():
        return model(x)
