"""Ahead-of-time compiles on a build host with no GPU, the way a kernel library's build
step compiles for the GPUs it ships to: ``compile_like_launch(kernel, arch, *args,
**kwargs)`` compiles ``kernel`` for ``sm_<arch>`` specialized exactly as
``kernel[grid](*args, **kwargs)`` would be, by the JIT's own binder of the installed
Triton (which needs no driver), then ``triton.compile`` as the JIT calls it.

Tensors are :class:`Buffer` objects: a dtype, a shape, strides and a 16-byte-aligned
address, which is all the JIT reads of a tensor to specialize it. Works on Triton 3.0-3.9.
"""

from __future__ import annotations

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend


class TorchDtype:
    """What the JIT reads of a ``torch.dtype``: its name, ``torch.float16``."""

    __module__ = "torch"

    def __init__(self, name: str) -> None:
        self.name = name
        self.itemsize = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}.get(
            name, 1
        )

    def __str__(self) -> str:
        return f"torch.{self.name}"

    def __repr__(self) -> str:
        return str(self)

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TorchDtype) and other.name == self.name


TorchDtype.__name__ = "dtype"  # the JIT tells a dtype by its class name


class Buffer:
    """A device tensor's layout: dtype, shape, strides (contiguous by default), address."""

    def __init__(self, dtype: str, shape: tuple[int, ...], strides=None, address: int = 1 << 20):
        self.dtype = TorchDtype(dtype)
        self.shape = tuple(shape)
        if strides is None:
            strides, step = [], 1
            for size in reversed(self.shape):
                strides.insert(0, step)
                step *= size
        self._strides = tuple(strides)
        self.address = address

    def data_ptr(self) -> int:
        return self.address

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def element_size(self) -> int:
        return self.dtype.itemsize


def compile_like_launch(kernel, arch: int, *args, **kwargs):
    """``kernel[grid](*args, **kwargs)``'s compile, for ``sm_<arch>``, with no GPU."""
    target = GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    kwargs.setdefault("debug", False)
    if hasattr(kernel, "_pack_args"):  # 3.5 on
        from triton.runtime.jit import create_function_from_signature

        binder = create_function_from_signature(kernel.signature, kernel.params, backend)
        bound, specialization, options = binder(*args, **kwargs)
        options, signature, constexprs, attrs = kernel._pack_args(
            backend, kwargs, bound, specialization, options
        )
        source = ASTSource(kernel, signature, constexprs, attrs)
    elif hasattr(kernel, "device_caches"):  # 3.3, 3.4
        from triton._utils import find_paths_if, get_iterable_path
        from triton.runtime.jit import create_function_from_signature

        binder = create_function_from_signature(kernel.signature, kernel.params, backend)
        bound, specialization, _ = binder(*args, **kwargs)
        options = backend.parse_options(kwargs)
        sigvals = [x[0] for x in specialization]
        signature = {p.name: v for p, v in zip(kernel.params, sigvals, strict=False)}
        paths = find_paths_if(sigvals, lambda _, val: val == "constexpr")
        constexprs = {p: get_iterable_path(list(bound.values()), p) for p in paths}
        attrvals = [x[1] for x in specialization]
        paths = find_paths_if(attrvals, lambda _, x: isinstance(x, str))
        attrs = {p: backend.parse_attr(get_iterable_path(attrvals, p)) for p in paths}
        source = ASTSource(kernel, signature, constexprs, attrs)
    else:  # 3.0-3.2
        source, options = _before_3_3(kernel, backend, args, kwargs)
    return triton.compile(source, target=target, options=options.__dict__)


def _before_3_3(kernel, backend, args, kwargs):
    try:
        kernel.create_binder(backend)  # 3.2
        three_two = True
    except TypeError:
        kernel.create_binder()  # 3.0, 3.1
        three_two = False
    bound, sig_and_spec, _, _, _ = kernel.binder(*args, **kwargs)
    options = backend.parse_options(kwargs)
    values = tuple(bound.values())
    keys = [kernel.params[i].name for i in kernel.non_constexpr_indices]
    signature = {
        k: ("*i8" if v == "none" else v)
        for k, v in zip(keys, sig_and_spec[: len(keys)], strict=False)
    }
    if three_two:
        config = backend.get_attrs_descriptor(kernel.params, values)
        folded = config.get_constants()
        constants = {
            p.name: v
            for v, p in zip(values, kernel.params, strict=False)
            if p.is_constexpr or p.num in folded or v is None
        }
    else:
        config = kernel._get_config(*values)
        constants = {
            p.name: v
            for v, p in zip(values, kernel.params, strict=False)
            if p.is_constexpr or p.num in config.equal_to_1 or v is None
        }
    return ASTSource(kernel, signature, constants, config), options
