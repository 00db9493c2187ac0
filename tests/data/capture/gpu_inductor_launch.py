"""A torch.compile'd pointwise function for `repro capture` on a GPU: Inductor generates one
Triton kernel and launches it through its own launcher (not JITFunction.run), twice."""

import torch


def swish_residual(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x) + y


torch.manual_seed(0)
compiled = torch.compile(swish_residual)
x = torch.randn(3000, device="cuda")
y = torch.randn(3000, device="cuda")
for _ in range(2):
    error = (compiled(x, y) - swish_residual(x, y)).abs().max().item()
torch.cuda.synchronize()
print(f"torch.compile'd swish: max abs error against eager {error:.3g}")
