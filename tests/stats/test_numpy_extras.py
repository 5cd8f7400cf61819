"""numpy's f2py and testing stay lazy through scipy.special's import, and work as usual when used."""

from __future__ import annotations

import subprocess
import sys

_CHILD = """
import sys
import rlgate.stats
import scipy.special
import numpy
lazy = type(sys.modules["numpy.f2py"]).__name__
assert lazy == "_LazyModule", lazy  # scipy.special's import did not run numpy.f2py
assert "numpy.f2py.crackfortran" not in sys.modules
assert callable(numpy.f2py.run_main)  # first use loads it, exactly as a plain import would
assert type(sys.modules["numpy.f2py"]).__name__ == "module"
from numpy.testing import assert_allclose
assert_allclose(scipy.special.ndtr(0.0), 0.5)
print("ok")
"""


def test_f2py_and_testing_load_on_first_use_only() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_already_imported_modules_are_left_alone() -> None:
    import numpy.testing

    from rlgate.stats.numpy_extras import keep_lazy

    keep_lazy()
    assert sys.modules["numpy.testing"] is numpy.testing
    assert type(numpy.testing).__name__ == "module"
