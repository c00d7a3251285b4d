"""Build the optional compiled fast paths (synprep/_fastoracle.pyx: the oracle;
synprep/_fastcollate.pyx: gathering and padding batches).

All metadata lives in pyproject.toml. If the extension cannot be compiled, synprep
still installs and runs the pure-Python reference path (only slower).
"""

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - Cython is a build requirement
    ext_modules = []
else:
    ext_modules = cythonize(
        [
            Extension(f"synprep.{name}", [f"synprep/{name}.pyx"], optional=True, extra_compile_args=["-O2"])
            for name in ("_fastoracle", "_fastcollate")
        ],
        language_level=3,
        quiet=True,
    )

setup(ext_modules=ext_modules)
