# GF301 negative: apex.amp and accelerate have their own `amp` / `autocast`;
# only torch.cuda.amp / torch.cpu.amp are deprecated.
from apex import amp
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")


def train_step(model, optimizer, loss_fn, x, y):
    with accelerator.autocast():
        loss = loss_fn(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()
