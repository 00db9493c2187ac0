"""A torch.compile'd training step for `repro capture` on a GPU: Inductor's Triton kernels
write gradients (the biases', the LayerNorm's), which autograd takes over when nothing
else holds them. Prints the CUDA allocations a step makes once warm."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(64, 128),
    torch.nn.GELU(),
    torch.nn.LayerNorm(128),
    torch.nn.Linear(128, 64),
).cuda()
compiled = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
inputs, targets = torch.randn(32, 64, device="cuda"), torch.randn(32, 64, device="cuda")


def step() -> None:
    optimizer.zero_grad(set_to_none=True)
    torch.nn.functional.mse_loss(compiled(inputs), targets).backward()
    optimizer.step()


for _ in range(20):  # past the launches after which capture keeps a kernel by reference
    step()
torch.cuda.synchronize()
before = torch.cuda.memory_stats()["allocation.all.allocated"]
for _ in range(10):
    step()
torch.cuda.synchronize()
after = torch.cuda.memory_stats()["allocation.all.allocated"]
print(f"allocations a step: {(after - before) / 10:g}")
