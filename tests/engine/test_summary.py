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
