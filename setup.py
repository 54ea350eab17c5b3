"""The one compiled part: summary.py's per-tensor loops (backend/graph/_tables.c). Everything
else is in pyproject.toml. `optional`: where it cannot be built (no C compiler), the install
goes on and summary.py takes its numpy path."""

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
        )
    ]
)
