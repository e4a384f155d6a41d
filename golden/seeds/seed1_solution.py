# ✅ 用 clone().detach() 生成只用于日志的副本，不参与计算
f = self.feat(x)                  # 参与反传
f_for_log = f.detach().clone()    # 仅用于可视化，别再写回去
# …用 f_for_log 画图/记录…

# ❌ f /= norm
# ✅
norm = (f.norm(dim=1, keepdim=True) + 1e-6)
f = f / norm

# ✅ 显式正则，进入计算图，由优化器“看得见”
def l2_sp_regularizer(m, tau=1e-4):
    return tau * m.weight.abs().mean()
# ✅ 如果要“硬裁剪”，用 optimizer hook 或 step 之后统一 clamp
@torch.no_grad()
def clamp_weights_(m: nn.Module, lo=-1.0, hi=1.0):
    for p in m.parameters():
        p.clamp_(lo, hi)
# 训练循环中：
scaler.scale(loss).backward()
scaler.step(opt); scaler.update()
clamp_weights_(net.fc)     # ✅ 在优化器更新后、no_grad 下原地裁剪
