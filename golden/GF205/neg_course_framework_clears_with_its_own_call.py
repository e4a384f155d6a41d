# GF205 negative: a homework autograder drives the course's own NumPy network, whose
# `zero_grads()` clears the accumulated gradients every iteration; it is not torch's
# `zero_grad()`, but it is a clear, so nothing accumulates.
from handout.nn import MLP
from handout.optim import Adam


def check_adam(batches):
    mlp = MLP([6, 16, 3])
    optimizer = Adam(mlp, lr=1e-3)
    for x, y in batches:
        mlp.zero_grads()
        mlp.forward(x)
        mlp.backward(y)
        optimizer.step()
    return mlp
