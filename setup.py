"""Build the optional compiled fast paths (synprep/_fastoracle.pyx: the oracle;
synprep/_fastcollate.pyx: gathering and padding batches), and put the demo parser
models into the package.

All metadata lives in pyproject.toml. If the extension cannot be compiled, synprep
still installs and runs the pure-Python reference path (only slower);
``SYNPREP_NO_EXTENSIONS=1`` skips the compilation on purpose (tests/test_packaging.py
builds its wheel so: what it checks does not depend on the compiled paths).

The demo models live in ``resources/`` of the repository (README, LICENSE,
``udpipe/*.udpipe``); a built wheel or a non-editable install carries a copy as
``synprep/resources/``, where :func:`synprep.parsers.udpipe_backend.resources_dir`
finds them (an editable install reads the repository's folder itself).
"""

import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

RESOURCES = [os.path.join("resources", f) for f in ("README.md", "LICENSE")] + [
    os.path.join("resources", "udpipe", f) for f in ("en.udpipe", "de.udpipe")
]


class build_py_with_resources(build_py):
    """build_py, then the demo models into the built package (synprep/resources/)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the package is the source tree, which finds resources/ beside it
        for path in RESOURCES:
            target = os.path.join(self.build_lib, "synprep", path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - Cython is a build requirement
    cythonize = None
if cythonize is None or os.environ.get("SYNPREP_NO_EXTENSIONS") == "1":
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

setup(ext_modules=ext_modules, cmdclass={"build_py": build_py_with_resources})
