"""Position and length bias of an LLM judge, measured on the items it decided."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from rlgate.judge.report import JudgeItem, LengthBias, LengthSplit, PositionBias

_VALUE = {"win": 1.0, "tie": 0.5, "loss": 0.0}


def position_bias(items: Sequence[JudgeItem]) -> PositionBias:
    """Flip rate: among items with valid verdicts in both orders, how often the candidate's result
    differs between the orders; and how often the answer shown first wins a decisive call."""
    both = flips = decisive = first_wins = 0
    for item in items:
        valid = [c for c in item.calls if c.error is None and c.outcome is not None]
        for call in valid:
            if call.verdict in ("first", "second"):
                decisive += 1
                first_wins += call.verdict == "first"
        if item.outcome == "error":
            continue
        by_order = {order: [_VALUE[c.outcome] for c in valid if c.order == order and c.outcome]
                    for order in ("candidate_first", "baseline_first")}
        if by_order["candidate_first"] and by_order["baseline_first"]:
            both += 1
            flips += fmean(by_order["candidate_first"]) != fmean(by_order["baseline_first"])
    return PositionBias(items_both_orders=both, flips=flips, flip_rate=flips / both if both else None,
                        decisive_calls=decisive, first_position_wins=first_wins,
                        first_position_win_rate=first_wins / decisive if decisive else None)


def _split(items: list[JudgeItem]) -> LengthSplit:
    values = [_VALUE[i.outcome] for i in items]
    return LengthSplit(n=len(values), win_rate=fmean(values) if values else None)


def length_bias(items: Sequence[JudgeItem]) -> LengthBias:
    """Win rate of the candidate when its answer is longer, shorter or as long as the baseline's."""
    judged = [i for i in items if i.outcome in _VALUE and i.baseline_chars is not None]
    longer = [i for i in judged if i.candidate_chars > (i.baseline_chars or 0)]
    shorter = [i for i in judged if i.candidate_chars < (i.baseline_chars or 0)]
    same = [i for i in judged if i.candidate_chars == i.baseline_chars]
    decisive = [i for i in [*longer, *shorter] if i.outcome in ("win", "loss")]
    longer_ids = {id(i) for i in longer}
    longer_wins = sum((i.outcome == "win") == (id(i) in longer_ids) for i in decisive)
    return LengthBias(candidate_longer=_split(longer), baseline_longer=_split(shorter), same_length=_split(same),
                      decisive_unequal=len(decisive), longer_wins=longer_wins,
                      longer_win_rate=longer_wins / len(decisive) if decisive else None)
