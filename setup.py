"""Build step for the one compiled part: the solver's depth-first search.

Everything else about the package is in ``pyproject.toml``. The extension is
optional: without a C compiler the install goes on without it and the solver
runs its pure-Python search (``shared/solver/fast.py`` says which is in use).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "shared.solver._fastsearch",
            ["shared/solver/_fastsearch.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
