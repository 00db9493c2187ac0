"""A torch.compile'd model for `repro capture` on a GPU (bench/capture_gpu.sh): Inductor
generates and compiles its Triton kernels; the program checks the output against eager."""

import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(256)
        self.up = torch.nn.Linear(256, 1024)
        self.down = torch.nn.Linear(1024, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x)))).softmax(dim=-1)


torch.manual_seed(0)
model = Block().cuda()
x = torch.randn(64, 256, device="cuda")
compiled = torch.compile(model)
with torch.no_grad():
    error = (compiled(x) - model(x)).abs().max().item()
print(f"torch.compile'd block: max abs error against eager {error:.3g}")
