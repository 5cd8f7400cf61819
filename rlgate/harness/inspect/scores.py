"""A logged sample's scores as rlgate reads them: inspect's verdict strings and numbers, an unreadable string kept as
written (corrupt), never the 0.0 that inspect's `value_to_float` falls back to."""

from __future__ import annotations

import math
from typing import Any

STATE_SUCCESS = "state_success"
SUCCESS_KEYS = ("task_success", "success")


#: the strings inspect's scorers write for a verdict (value_to_float's defaults), as numbers
_VERDICTS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0, "yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def _unreadable(value: Any) -> bool:
    """A score string that is neither a verdict (C / I / P / N, yes / no, true / false) nor a finite number.

    inspect's `value_to_float` turns such a string ("unsafe", "NaN") into 0.0 with a log warning, which
    would read an unknown safety verdict as "safe": rlgate keeps it as it was written, so it is corrupt."""
    if not isinstance(value, str):
        return False
    if value in _VERDICTS or value.lower() in _VERDICTS:
        return False
    try:
        return not math.isfinite(float(value))
    except ValueError:
        return True


def _float(value: Any) -> float | None:
    """inspect's own `value_to_float`, except that a value it cannot map (a free-text string such as
    "G:50.0 : T:100.0", a list) is unreadable (NaN: corrupt), never the 0.0 it falls back to with a warning."""
    from inspect_ai.scorer import value_to_float

    if _unreadable(value) or isinstance(value, list | dict):  # value_to_float would give 0.0 with a warning
        return math.nan
    try:
        return float(value_to_float()(value))
    except (TypeError, ValueError):
        return None


def sample_scores(sample: Any) -> tuple[float | None, float | None, dict[str, float], dict[str, Any]]:
    """(success, state success, every numeric score by name, score strings that are no number) from a sample's
    scores (first scorer decides). An unreadable string is NaN in the numbers (corrupt, never 0.0)."""
    numeric: dict[str, float] = {}
    raw: dict[str, Any] = {}
    success: float | None = None
    state: float | None = None
    for index, (name, score) in enumerate((sample.scores or {}).items()):
        value = score.value
        if isinstance(value, dict):
            for key, item in value.items():
                number = _float(item)
                if _unreadable(item):
                    raw[str(key)] = item
                if number is not None:
                    numeric[str(key)] = number
            if success is None:
                found = next((numeric[k] for k in SUCCESS_KEYS if k in numeric), None)
                success = found if found is not None else (
                    min(numeric.values()) if numeric else None) if index == 0 else None
        else:
            number = _float(value)
            if _unreadable(value):
                raw[name] = value
            if number is not None:
                numeric[name] = number
                if index == 0 or name in SUCCESS_KEYS:
                    success = number if success is None or name in SUCCESS_KEYS else success
        meta = score.metadata or {}
        if STATE_SUCCESS in meta and state is None:
            state = _float(meta[STATE_SUCCESS])
    if STATE_SUCCESS in numeric:
        state = numeric[STATE_SUCCESS]
    if success is None and sample.error is None:
        success = math.nan  # no scorer, or none whose value is a number: unknown (corrupt), never a failure
    return success, state, numeric, raw
