"""The two sequential tests a gate can be judged by, behind one interface, and the gate rules built on them.

- `Betting` (protocol.sequential.method: betting, the default): the betting confidence sequence
  (rlgate.stats.sequential; Waudby-Smith & Ramdas, JRSS-B 2024), valid at every look however many
  looks are taken and whenever one stops (anytime-valid).
- `GroupSequential` (method: group_sequential): z statistics against Lan-DeMets alpha-spending
  boundaries (rlgate.stats.group_sequential; Lan & DeMets, Biometrika 1983; Jennison & Turnbull
  2000) at the contract's planned looks, information fraction = documents judged / documents
  planned. Its error guarantee holds at the planned looks only: a run that adds unplanned looks is
  not covered. The last planned look (fraction 1) is the final analysis: a gate still open there is
  settled by the final boundary (primary: improvement not shown; regression: inconclusive), since
  re-testing it at the fixed-sample level after the interim looks would exceed alpha.
`settle` applies each gate's rule (the same thresholds as the fixed-sample engine) with either test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rlgate.engine.gates import AnyGate
from rlgate.stats.distributions import normal_cdf
from rlgate.stats.sequential import confidence_sequence, from_unit, rejects, to_unit

BETTING = ("betting confidence sequence with aGRAPA bets (Waudby-Smith & Ramdas, 'Estimating means of bounded "
           "random variables by betting', JRSS-B 2024), one-sided, valid at every look")
PRIOR_VARIANCE = 0.25  # one pseudo-observation of the largest variance on [0, 1]: no zero standard error early


@dataclass
class Track:
    """One gate's observations in generation order, and how many are known at the end of each look."""

    x: np.ndarray  # mapped onto [0, 1]
    at_look: list[int]
    low: float
    high: float
    planned: int = 0  # observations planned by the last planned look (group-sequential information)
    planned_looks: int = 0  # looks planned (the last one is the final analysis)
    binary: bool = False  # 0/1 scores: paired differences in {-1, 0, 1}, or a candidate's own 0/1 values
    paired: bool = True  # paired differences (primary, regression) or the candidate's own values (hard)

    def estimate_reaches(self, n: int, min_estimate: float | None) -> bool:
        """Whether the running mean of the first n observations, in metric units, is at least min_estimate
        (always, when none is asked): the primary's 'estimate >= min_delta' beside its test."""
        return min_estimate is None or float(from_unit(self.x[:n].mean(), self.low, self.high)) >= min_estimate

    def fractions(self) -> list[float]:
        """Information fraction at each look seen: observations / planned, 1 at the last planned look."""
        k_final = self.planned_looks or len(self.at_look)
        total = max(self.planned or self.at_look[-1], 1)
        return [1.0 if k == k_final else min(n / total, 1.0) for k, n in enumerate(self.at_look, start=1)]


def unit(track: Track, threshold: float) -> float:
    """A threshold in the metric's units mapped onto the track's [0, 1] scale (clipped to the edges)."""
    if track.low <= threshold <= track.high:
        return float(to_unit(np.array([threshold]), track.low, track.high)[0])
    return 0.0 if threshold < track.low else 1.0


class Method(Protocol):
    name: str
    description: str
    final_analysis: bool  # the last planned look settles every gate it tracks

    def first(self, track: Track, m: float, alpha: float, side: str, min_estimate: float | None = None) -> int | None:
        """First look (1-based) by which "mean <= m" ("greater") or "mean >= m" ("less") is rejected at level
        alpha (with the running estimate, in the metric's units, >= min_estimate when given); None if never."""

    def bounds(self, track: Track, look: int, alpha: float) -> tuple[float | None, float | None, float | None]:
        """(lower, upper) bounds on the mean at `look` (which holds at least one observation) in metric units,
        and the z boundary behind them if any."""


class Betting:
    name = "betting"
    description = BETTING
    final_analysis = False

    def first(self, track: Track, m: float, alpha: float, side: str, min_estimate: float | None = None) -> int | None:
        hit = rejects(track.x, m, alpha, side)
        for k, n in enumerate(track.at_look, start=1):
            if n and hit[n - 1] and track.estimate_reaches(n, min_estimate):
                return k
        return None

    def bounds(self, track: Track, look: int, alpha: float) -> tuple[float | None, float | None, float | None]:
        n = track.at_look[look - 1]
        lower, upper = confidence_sequence(track.x[:n], alpha, grid=1001)
        return (float(from_unit(lower[-1], track.low, track.high)), float(from_unit(upper[-1], track.low, track.high)),
                None)


class GroupSequential:
    name = "group_sequential"
    final_analysis = True

    def __init__(self, spending: str = "pocock") -> None:
        from rlgate.stats.group_sequential import SPENDING_NAMES

        self.spending = spending
        self.description = (f"group-sequential z test, {SPENDING_NAMES[spending]} (Lan & DeMets, Biometrika 1983; "
                            "Jennison & Turnbull 2000), one-sided, valid at the planned looks only")

    def critical(self, track: Track, alpha: float) -> list[float]:
        """Each look's one-sided boundary; a look adding no information repeats its predecessor's."""
        from rlgate.stats.group_sequential import boundaries

        fractions = track.fractions()
        levels = sorted({t for t, n in zip(fractions, track.at_look, strict=True) if n > 0})
        by_level = dict(zip(levels, boundaries(tuple(levels), alpha, self.spending), strict=True)) if levels else {}
        return [by_level.get(t, math.inf) if n > 0 else math.inf for t, n in zip(fractions, track.at_look, strict=True)]

    @staticmethod
    def moments(track: Track, n: int) -> tuple[float, float]:
        """(mean, standard error) of the first n observations on [0, 1]."""
        x = track.x[:n]
        mean = float(x.mean())
        return mean, math.sqrt((float(((x - mean) ** 2).sum()) + PRIOR_VARIANCE) / n / n)

    @staticmethod
    def z(track: Track, n: int, m: float) -> float:
        """The z statistic of "mean <= m" (m on [0, 1]) over the first n observations, large when the mean is
        above m. 0/1 scores use the score tests the fixed-sample engine uses, whose standard error is taken
        under the null (it keeps its level when discordance is rare, where the plain z does not): Tango's
        test for paired differences, the one-sample score test for a candidate's own proportion. Other
        values: (mean - m) / standard error, with one pseudo-observation of variance 1/4 on [0, 1]."""
        x = track.x[:n]
        if track.binary and track.paired:
            from rlgate.stats.noninferiority import tango_z

            delta0 = float(from_unit(m, track.low, track.high))
            return float(tango_z(int((x > 0.75).sum()), int((x < 0.25).sum()), n, delta0))
        if track.binary:
            return (float(x.mean()) - m) / math.sqrt(m * (1 - m) / n)
        mean, se = GroupSequential.moments(track, n)
        return (mean - m) / se

    def first(self, track: Track, m: float, alpha: float, side: str, min_estimate: float | None = None) -> int | None:
        if side not in ("greater", "less"):
            raise ValueError(f"side must be 'greater' or 'less', not {side!r}")
        sign = 1.0 if side == "greater" else -1.0
        previous = 0
        for k, (n, c) in enumerate(zip(track.at_look, self.critical(track, alpha), strict=True), start=1):
            if n == 0 or n == previous:  # no new information: no new test
                continue
            previous = n
            if sign * self.z(track, n, m) >= c and track.estimate_reaches(n, min_estimate):
                return k
        return None

    def bounds(self, track: Track, look: int, alpha: float) -> tuple[float | None, float | None, float | None]:
        """The repeated confidence bounds (Jennison & Turnbull Ch. 9): mean -/+ c_k * se at the look."""
        n = track.at_look[look - 1]
        c = self.critical(track, alpha)[look - 1]
        if not math.isfinite(c):
            return track.low, track.high, None
        x = track.x[:n]
        if track.binary and track.paired:  # Tango's test inverted at the look's nominal level
            from rlgate.stats.noninferiority import binary_lower_bound

            better, worse, level = int((x > 0.75).sum()), int((x < 0.25).sum()), normal_cdf(-c)
            # a paired 0/1 track is on [-1, 1]: the change in metric units is (better - worse) / n itself
            lower = float(binary_lower_bound(better, worse, n, level))
            upper = -float(binary_lower_bound(worse, better, n, level))
            return lower, upper, c
        if track.binary:
            from rlgate.stats.intervals import wilson_interval

            lo, hi = wilson_interval(float(x.sum()), n, 1 - 2 * normal_cdf(-c))
        else:
            mean, se = self.moments(track, n)
            lo, hi = max(mean - c * se, 0.0), min(mean + c * se, 1.0)
        return float(from_unit(lo, track.low, track.high)), float(from_unit(hi, track.low, track.high)), c


def method_of(name: str, spending: str | None) -> Method:
    return GroupSequential(spending or "pocock") if name == "group_sequential" else Betting()


def _test(method: Method, track: Track, threshold: float, alpha: float, side: str,
          min_estimate: float | None = None) -> int | None:
    m = unit(track, threshold)
    if m <= 0.0 or m >= 1.0:  # a threshold at the range's edge: never (or trivially) crossed; stay open
        return None
    return method.first(track, m, alpha, side, min_estimate)


def _final(method: Method, track: Track) -> int | None:
    """The look of the final analysis once the track has reached it (group-sequential only): the first look at
    which the gate's task has all its planned documents (information fraction 1; a short task of a suite gets
    there before the suite's last look), else the last planned look."""
    if not method.final_analysis or not track.planned_looks:
        return None
    if track.planned:
        reached = next((k for k, n in enumerate(track.at_look, start=1) if n >= track.planned), None)
        if reached is not None:
            return reached
    return track.planned_looks if len(track.at_look) >= track.planned_looks else None


def settle(method: Method, kind: str, gate: AnyGate, track: Track, alpha: float) -> tuple[str, str, int | None, str]:
    """(verdict pass|fail|inconclusive|open, outcome, settled look, reason) from the gate's sequential tests."""
    def earliest(*looks: int | None) -> int | None:
        return None if any(look is None for look in looks) else max(look for look in looks if look is not None)

    final = _final(method, track)
    if kind == "regression":
        limit = gate.max_drop  # type: ignore[union-attr]
        ok, bad = _test(method, track, -limit, alpha, "greater"), _test(method, track, -limit, alpha, "less")
        if ok is not None and (bad is None or ok <= bad):
            return "pass", "", ok, f"non-inferiority shown: lower bound >= -max_drop {-limit:g} at look {ok}"
        if bad is not None:
            return "fail", "regression_fail", bad, f"drop beyond max_drop {limit:g} shown at look {bad}"
        if final is not None:  # the final analysis, by the gate's own test
            test = gate.test  # type: ignore[union-attr]
            if test == "significance":
                return "pass", "", final, f"no drop beyond max_drop {limit:g} shown by the final planned look {final}"
            if test == "non_inferiority":
                return ("fail", "regression_fail", final,
                        f"non-inferiority not shown by the final planned look {final}")
            return ("inconclusive", "regression_inconclusive", final, "neither non-inferiority nor a drop beyond "
                    f"max_drop {limit:g} shown by the final planned look {final}")
        return "open", "", None, "neither non-inferiority nor a drop beyond max_drop shown"
    if kind == "primary":
        drop = gate.max_drop  # type: ignore[union-attr]
        if gate.require == "lower_bound":  # type: ignore[union-attr]
            target = gate.min_delta  # type: ignore[union-attr]
            ok = _test(method, track, target, alpha, "greater")
        else:  # as the fixed-sample rule: an improvement shown (> 0) and its estimate at least min_delta
            target = 0.0
            ok = _test(method, track, 0.0, alpha, "greater", min_estimate=gate.min_delta)  # type: ignore[union-attr]
        regressed = _test(method, track, -drop, alpha, "less")
        missed = earliest(_test(method, track, gate.min_delta, alpha, "less"),  # type: ignore[union-attr]
                          _test(method, track, -drop, alpha, "greater"))
        found = [(look, v) for look, v in ((ok, "pass"), (regressed, "primary_regression"), (missed, "primary_fail"))
                 if look is not None]
        if not found:
            if final is not None:
                return "fail", "primary_fail", final, f"improvement not shown by the final planned look {final}"
            return "open", "", None, "improvement neither shown nor ruled out"
        look, what = min(found, key=lambda item: item[0])
        if what == "pass":
            if gate.require == "lower_bound":  # type: ignore[union-attr]
                return "pass", "", look, f"improvement above min_delta {target:g} shown at look {look}"
            return "pass", "", look, (f"improvement above 0 shown at look {look}, its estimate >= min_delta "
                                      f"{gate.min_delta:g}")  # type: ignore[union-attr]
        return "fail", what, look, f"{what.replace('_', ' ')} shown at look {look}"
    bounds = [(name, float(getattr(gate, name))) for name in ("max", "min") if getattr(gate, name, None) is not None]
    within: list[int | None] = []
    for name, bound in bounds:
        side_ok, side_bad = ("less", "greater") if name == "max" else ("greater", "less")
        bad = _test(method, track, bound, alpha, side_bad)
        if bad is not None:
            return "fail", f"{kind}_fail", bad, f"value beyond {name} {bound:g} shown at look {bad}"
        within.append(_test(method, track, bound, alpha, side_ok))
    inside = earliest(*within)
    if inside is not None and within:
        return "pass", "", inside, f"value within its bounds shown at look {inside}"
    return "open", "", None, "value not yet shown on either side of its bound"


__all__ = ["BETTING", "Betting", "GroupSequential", "Method", "Track", "method_of", "settle", "unit"]
