"""Gate lines in words: thresholds read with the sign they have."""

from __future__ import annotations

from rlgate.engine.models import GateVerdict
from rlgate.report.views import gate_line


def _primary(min_delta: float) -> GateVerdict:
    return GateVerdict(name="p", kind="primary", metric="gsm8k/exact_match/flexible-extract", verdict="pass",
                       outcome="pass", effect="release", baseline=0.5, candidate=0.6, delta=0.1, n=60,
                       threshold={"min_delta": min_delta, "max_drop": 0.0}, reason="pass")


def test_min_delta_is_written_with_its_own_sign() -> None:
    assert "needs +2.0 pp" in gate_line(_primary(0.02))
    assert "needs -50.0 pp" in gate_line(_primary(-0.5))  # not "+-50.0 pp"
    assert "+-" not in gate_line(_primary(-0.5))
