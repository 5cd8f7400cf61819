"""Rule-based answer extraction and scoring for MathVista (testmini).

Multiple choice: a letter "(B)" / "Answer: B", or the text of exactly one choice, after the last
"answer" marker when there is one. Free form: the last number after the marker (integer or float,
rounded to the row's precision), or for text answers the marker's line. Anything else is
"[invalid]": scored 0 here, counted by rlgate's answer_parse_failure_rate, and sent to the LLM judge
under the `rule_then_llm_judge` policy.
"""

from __future__ import annotations

import re
from typing import Any

INVALID = "[invalid]"
_MARKER = re.compile(r"(?:final answer|answer)\s*(?:is)?\s*[:：]?\s*", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_LETTER = re.compile(r"^\(?([A-H])\)?(?:[.:)\s]|$)")


def doc_to_text(doc: dict[str, Any]) -> str:
    query = doc.get("query") or doc["question"]
    return "<image>" + str(query) + "\nEnd your response with 'Final Answer: <answer>'."


def _tail(response: str) -> str:
    """The text after the last answer marker (the whole response when there is none)."""
    found = list(_MARKER.finditer(response))
    return response[found[-1].end():].strip() if found else response.strip()


def _number(text: str) -> float | None:
    found = _NUMBER.findall(text)
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


def extract(response: str, doc: dict[str, Any]) -> str:
    """The answer the rules find in `response`, normalised; INVALID when none."""
    tail = _tail(response)
    first_line = next((line.strip() for line in tail.splitlines() if line.strip()), "")
    if doc.get("question_type") == "multi_choice" and doc.get("choices"):
        choices = [str(c) for c in doc["choices"]]
        letter = _LETTER.match(first_line)
        if letter:
            index = "ABCDEFGH".index(letter.group(1))
            return choices[index] if index < len(choices) else INVALID
        named = [c for c in choices if c.lower() in first_line.lower()]
        return named[0] if len(named) == 1 else INVALID
    answer_type = doc.get("answer_type")
    if answer_type in ("integer", "float"):
        value = _number(first_line)
        if value is None:
            return INVALID
        if answer_type == "integer":
            return str(round(value))
        precision = doc.get("precision")
        return f"{value:.{int(precision)}f}" if precision is not None else str(value)
    text = first_line.rstrip(".").strip()
    return text if text else INVALID


def extract_answers(resps: list[list[str]], docs: list[dict[str, Any]]) -> list[list[str]]:
    return [[extract(r, doc) for r in rs] for rs, doc in zip(resps, docs, strict=False)]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    pred = results[0]
    if pred == INVALID:
        return {"acc": 0.0}
    gold = str(doc["answer"]).strip()
    if doc.get("answer_type") in ("integer", "float"):
        try:
            return {"acc": float(abs(float(pred) - float(gold)) < 1e-9)}
        except ValueError:
            return {"acc": 0.0}
    return {"acc": float(pred.strip().lower() == gold.lower())}
