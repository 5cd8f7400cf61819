"""The pure gate engine: typed results and a contract in, a Decision out.

`from rlgate.engine import decide` loads the engine lazily, so importing `rlgate.engine.models`
(the Decision model other layers read) stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["decide"]


def __getattr__(name: str) -> Any:
    if name == "decide":
        from rlgate.engine.decision import decide

        return decide
    raise AttributeError(f"module 'rlgate.engine' has no attribute {name!r}")
