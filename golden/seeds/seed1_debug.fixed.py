def tap_grad(t, name):
    t.retain_grad()
    def _hook(grad): print(f"[{name}] grad_norm={grad.norm().item():.4e}")
    t.register_hook(_hook)
    return t

with torch.autocast("cuda", enabled=True):
    f = net.feat(x)
    tap_grad(f, "feat")     # ✅ 非叶子张量需要 retain_grad 才能看到 .grad
    logits = net.fc(f)
    loss = F.binary_cross_entropy_with_logits(logits, y)
loss.backward()
# 观察是否有打印；若无，则在更前面打点，直到发现哪一段“消失”
