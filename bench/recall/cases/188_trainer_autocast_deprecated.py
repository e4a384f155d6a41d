"""Source: https://github.com/mit-han-lab/efficientvit/issues/127
Title: Deprecated Usage of torch.cuda.amp.autocast
What went wrong: the trainer wraps its forward pass in `torch.cuda.amp.autocast(...)`, which
PyTorch 2.4 and later report as deprecated in favour of `torch.amp.autocast("cuda", ...)`.
runs: trains; torch emits FutureWarning "`torch.cuda.amp.autocast(args...)` is deprecated"
scope: documented
"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, amp="fp16"):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.enable_amp = amp != "fp32" and torch.cuda.is_available()

    def run_step(self, images, labels):
        self.optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=self.enable_amp):  # expect: GF301
            output = self.model(images)
            loss = nn.functional.cross_entropy(output, labels)
        loss.backward()
        self.optimizer.step()
        return loss.item()


trainer = Trainer(nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)))
print(trainer.run_step(torch.randn(2, 3, 16, 16), torch.randint(0, 10, (2,))))
