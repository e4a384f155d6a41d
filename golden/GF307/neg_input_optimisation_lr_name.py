# GF307 negative (and a crash it once had): optimising an input image to
# maximise one class score, with the learning rate bound to a plain number
# first. The optimizer holds the image, not the model's parameters; the loss
# keeps its path to the image, and the number literal behind `lr` must not
# be mistaken for a call.
import torch
import torch.nn as nn

classifier = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
image = torch.rand(1, 3, 8, 8, requires_grad=True)
step_size = 6
optimizer = torch.optim.SGD([image], lr=step_size)
for _ in range(5):
    optimizer.zero_grad()
    score = classifier(image)[0, 3]
    loss = -score
    loss.backward()
    optimizer.step()
