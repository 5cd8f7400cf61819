"""The fallback job summary (no report.md) keeps contract strings as text, like report.md does."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from rlgate.ci.steps import Outcome, fallback_summary
from rlgate.engine.models import CapabilityVerdict, Decision


def test_a_capability_flag_cannot_break_out_of_its_code_span() -> None:
    cap = CapabilityVerdict(name="tools", scope="feature", tasks=["t"], decision="block", gates=[],
                            flag="block_for_x` <img src=http://evil/x.png> `", summary="blocked")
    decision = Decision(decision="release", summary="release", gates=[], capabilities=[cap], flags=[cap.flag or ""],
                        contract="c", alpha=0.05, seed=0)
    html = MarkdownIt("commonmark").render(fallback_summary(Outcome("release", decision)))
    assert not re.search(r"<img", html) and "evil/x.png" in html
