"""Compile a kernel library's kernels for the GPUs it ships to on a build machine that has
none (a CI container warming Triton's cache): an active driver that names the target, and
tensors that are only a layout (dtype, shape, strides, a 16-byte-aligned address): all the
JIT reads of an argument to specialize a kernel. Launching is refused."""

import triton
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


class BuildHost(DriverBase):
    def __init__(self, arch):
        self.target = GPUTarget("cuda", arch, 32)

    @classmethod
    def is_active(cls):
        return True

    def map_python_to_cpp_type(self, ty):
        raise NotImplementedError("no launches on a build host")

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        raise NotImplementedError("no torch on a build host")

    def get_benchmarker(self):
        raise NotImplementedError("no benchmarks on a build host")

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


class dtype:  # the JIT tells a torch dtype by its class name and module
    __module__ = "torch"

    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __str__(self):
        return f"torch.{self.name}"


int8, int32, float16 = dtype("int8", 1), dtype("int32", 4), dtype("float16", 2)


class Tensor:
    def __init__(self, shape, dtype, address=1 << 20):
        self.shape, self.dtype, self.address = tuple(shape), dtype, address
        strides, step = [], 1
        for size in reversed(self.shape):
            strides.insert(0, step)
            step *= size
        self._strides = tuple(strides)

    def data_ptr(self):
        return self.address

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def element_size(self):
        return self.dtype.itemsize


def target(arch):
    triton.runtime.driver.set_active(BuildHost(arch))
