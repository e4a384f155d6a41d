"""Source: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/issues/2
Title: Code in section 2 does not work
What went wrong: a book's NumPy-style network creates its weights with requires_grad=True
and then converts them with `.type(dtype)`, where dtype is the CUDA float type when a GPU is
present; the conversion makes a non-leaf copy, so the hand-written update finds no gradient.
runs: with a GPU, `w1.grad` is None and the update raises TypeError; on a CPU-only machine
`.type(torch.FloatTensor)` returns the same tensor and the script trains
scope: extension (the copy is made by `.type(...)`)
"""
import torch

dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
input_size, hidden_size, output_size, lr = 10, 20, 4, 0.01

w1 = torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)  # expect: GF302
w2 = torch.randn(hidden_size, output_size, requires_grad=True).type(dtype)  # expect: GF302

x = torch.randn(16, input_size).type(dtype)
y = torch.randn(16, output_size).type(dtype)
for epoch in range(5):
    a2 = x.matmul(w1).sigmoid()
    hyp = a2.matmul(w2)
    loss = ((hyp - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w1 -= lr * w1.grad
        w2 -= lr * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
