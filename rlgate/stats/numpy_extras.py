"""numpy's developer-tool submodules (f2py, testing) kept lazy when scipy is imported.

numpy itself loads `numpy.f2py` and `numpy.testing` only on first use. scipy >= 1.15's array-API layer,
imported by `scipy.special`, copies every public name of numpy (`hasattr` on each), which imports both:
f2py alone pulls a Fortran parser and charset detection, half of what importing scipy.special costs, for
modules rlgate (and the gate decision) never calls. `keep_lazy` registers them with the standard library's
`importlib.util.LazyLoader` first, so the copy sees a module object whose code runs on first attribute use,
exactly as a plain import would have run it. Modules already imported are left alone.
"""

from __future__ import annotations

import importlib.util
import sys

#: numpy submodules nothing on rlgate's paths uses and that scipy's import would otherwise load
LAZY = ("f2py", "testing")


def keep_lazy(names: tuple[str, ...] = LAZY) -> None:
    """Register numpy's `names` submodules as lazy modules (a no-op for those already imported)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        import numpy
    for name in names:
        full = f"numpy.{name}"
        if full in sys.modules:
            continue
        spec = importlib.util.find_spec(full)
        if spec is None or spec.loader is None:
            continue
        loader = importlib.util.LazyLoader(spec.loader)
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        loader.exec_module(module)
        setattr(numpy, name, module)  # found as an attribute, so numpy's own __getattr__ never re-imports it
