"""summary.md: contract strings (its name, capability names) and input paths cannot inject Markdown or HTML."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from rlgate.engine.models import CapabilityVerdict, Decision, GateVerdict, RunRef
from rlgate.engine.summary import decision_markdown


def test_contract_strings_stay_text_in_summary_md() -> None:
    gate = GateVerdict(name="g", kind="regression", metric="t/acc", verdict="fail", outcome="regression_fail",
                       effect="block", reason="dropped")
    cap = CapabilityVerdict(name="tools <img src=http://evil/c.png>", scope="feature", tasks=["t"],
                            decision="block", gates=["g"], flag="block_for_tools <img src=http://evil/c.png>",
                            summary="blocked")
    decision = Decision(decision="release", summary="release", gates=[gate], capabilities=[cap],
                        flags=[cap.flag or ""], contract="x` ![pixel](http://evil/x.png) <b>`y",
                        inputs=[RunRef(role="candidate", source="/runs/a`<img src=http://evil/s.png>`")],
                        alpha=0.05, seed=0)
    text = decision_markdown(decision)
    html = MarkdownIt("commonmark").enable(["table"]).render(text)
    assert not re.search(r"<img|<b>", html), html
    assert "evil/x.png" in html and "evil/c.png" in html and "evil/s.png" in html  # shown, as text
    assert "Contract `plain`" in decision_markdown(decision.model_copy(update={"contract": "plain"}))


def test_invisible_characters_are_shown_escaped_in_summary_md() -> None:
    """summary.md is what CI step summaries show: a right-to-left override or an escape sequence in a results
    path or a warning reordered or hid the text after it (`rlgate gate` on a folder named so)."""
    decision = Decision(decision="release", summary="release", gates=[], contract="c\u202e", alpha=0.05, seed=0,
                        inputs=[RunRef(role="candidate", source="/runs/cand\u202e/x\x1b[2J")],
                        warnings=["task t\u2066 odd"])
    text = decision_markdown(decision)
    assert "cand\\u202e/x\\u001b[2J" in text and "c\\u202e" in text
    assert "t\\\\u2066 odd" in text  # a Markdown-escaped backslash: renders as t\u2066
    assert not any(ch in text for ch in "\u202e\x1b\u2066")
