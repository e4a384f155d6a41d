# GF301 positive without a fix: only the deprecated name is imported, so there
# is no `torch` to spell torch.amp.GradScaler with. Reported, not rewritten.
from torch.cuda.amp import GradScaler

scaler = GradScaler()
