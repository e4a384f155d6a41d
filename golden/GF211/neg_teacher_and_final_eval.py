# GF211 negative: the teacher is put in eval mode on purpose (the optimizer does
# not step it), and the student is switched to eval only after training.
import torch
import torch.nn.functional as F
from torchvision.models import resnet18


def distill(loader, epochs):
    student = resnet18(num_classes=10)
    teacher = resnet18(num_classes=10)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    for epoch in range(epochs):
        teacher.eval()
        for x, y in loader:
            with torch.no_grad():
                soft = teacher(x).softmax(-1)
            opt.zero_grad()
            loss = F.kl_div(student(x).log_softmax(-1), soft, reduction="batchmean")
            loss.backward()
            opt.step()
    student.eval()
    return student
