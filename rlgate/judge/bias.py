"""Position and length bias of an LLM judge, measured on the items it decided, and whether it can be trusted.

A judge whose verdicts follow the position or the length of the answers is not evidence of quality:
`judge_trust` compares both rates with the policy's limits (`max_position_flip_rate`,
`max_length_follow_rate`; defaults and their sources in gates/release_default.yaml).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from rlgate.contract.judge_policy import JudgeSpec
from rlgate.judge.report import BiasCheck, JudgeItem, JudgeTrust, LengthBias, LengthSplit, PositionBias

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


def _check(rate: float | None, n: int, limit: float, basis: str, min_items: int) -> BiasCheck:
    enforced = rate is not None and n >= min_items
    if rate is not None and not enforced:
        basis += f"; only {n} < min_bias_items {min_items}: not enforced"
    return BiasCheck(rate=rate, n=n, limit=limit, basis=basis, enforced=enforced,
                     exceeded=enforced and rate is not None and rate > limit)


def position_check(spec: JudgeSpec, bias: PositionBias) -> BiasCheck:
    """The flip rate over items judged in both orders; without such items, with seeded random order, the share
    of verdicts position alone explains, 2*|first-shown win rate - 0.5| (a judge always picking the first
    answer scores 1, an order-blind one about 0)."""
    limit, least = spec.max_position_flip_rate, spec.min_bias_items
    if bias.flip_rate is not None:
        return _check(bias.flip_rate, bias.items_both_orders, limit, "flips between the two orders", least)
    if spec.order_randomization and bias.first_position_win_rate is not None:
        rate = 2 * abs(bias.first_position_win_rate - 0.5)
        return _check(rate, bias.decisive_calls, limit,
                      "estimated from the first-shown win rate (one order per item; samples >= 2 measures it)",
                      least)
    return _check(None, 0, limit, "not measured: no item was judged in both orders and the order was not "
                                  "randomised (set samples: 2 or order_randomization: true)", least)


def length_check(spec: JudgeSpec, bias: LengthBias) -> BiasCheck:
    """Share of decisive verdicts on answers of unequal length that went to the longer answer."""
    if bias.longer_win_rate is None:
        return _check(None, 0, spec.max_length_follow_rate, "not measured: no decisive verdict on answers of "
                                                              "unequal length", spec.min_bias_items)
    return _check(bias.longer_win_rate, bias.decisive_unequal, spec.max_length_follow_rate,
                  "decisive verdicts won by the longer answer", spec.min_bias_items)


def _words(name: str, check: BiasCheck) -> str:
    if check.rate is None:
        return f"{name} not measured"
    verdict = "OVER LIMIT" if check.exceeded else "ok" if check.enforced else "not enforced"
    return f"{name} {check.rate:.2f} (limit {check.limit:g}, n={check.n}, {verdict})"


def judge_trust(spec: JudgeSpec, position: PositionBias | None, length: LengthBias | None) -> JudgeTrust:
    """The policy's bias limits applied to the measured biases."""
    pos = position_check(spec, position) if position is not None else None
    lng = length_check(spec, length) if length is not None else None
    over = [name for name, c in (("position flip rate", pos), ("length-follow rate", lng)) if c and c.exceeded]
    figures = "; ".join(_words(name, c) for name, c in (("position flip rate", pos), ("length-follow rate", lng))
                        if c is not None)
    if over:
        message = (f"judge NOT TRUSTED: {' and '.join(over)} over the limit ({figures}); its verdicts follow "
                   f"{'position' if 'position flip rate' in over else 'length'} rather than the answers")
    else:
        message = f"judge bias within limits ({figures})" if figures else "judge bias not measured"
    return JudgeTrust(position=pos, length=lng, on_bias=spec.on_bias, trusted=not over, message=message)
