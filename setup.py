"""The compiled parts: the hot loops of a traced run, summary.py's per-tensor loops
(backend/graph/_tables.c) and the executor's forward loop and backward observer
(backend/graph/_observe.c), and the engine's random stream and float fills, PyTorch's bit for
bit (engine/_random_fill.c), and float32 kernels that do numpy's passes in one, numpy's bits
(engine/_fused.c).
Everything else is in pyproject.toml. `optional`: where they cannot be built (no C compiler),
the install goes on and the Python code that does the same work runs instead."""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "backend.graph._tables",
            ["backend/graph/_tables.c"],
            include_dirs=[numpy.get_include()],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "backend.graph._observe",
            ["backend/graph/_observe.c"],
            include_dirs=[numpy.get_include()],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "engine._random_fill",
            ["engine/_random_fill.c"],
            include_dirs=[numpy.get_include()],  # numpy/random/bitgen.h
            depends=["engine/_random_fill_kernel.h"],
            # its float bits must be PyTorch's: no fused multiply-add but the ones it writes,
            # no fast-math (errno off only lets sqrt be one instruction)
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno"],
            optional=True,
        ),
        Extension(
            "engine._fused",
            ["engine/_fused.c"],
            # the same float32 bits as the numpy steps it replaces: no fused multiply-add
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno"],
            optional=True,
        ),
    ]
)
