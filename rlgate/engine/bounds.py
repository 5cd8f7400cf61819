"""The interval bound a `require: lower_bound` primary or a `test: non_inferiority` regression decides on.

The shown CI is the seeded bootstrap's; a verdict must not change with `--seed`, so the bound that
decides is the same interval without Monte-Carlo error: for 0/1 outcomes the exact percentile interval of
the count bootstrap (what B resamples estimate, B -> infinity: it equals the shown CI to within its
Monte-Carlo error), for other paired values Student's t interval over the (sample) differences, for
unpaired aggregates the normal interval already shown. When the shown CI and the deciding bound fall on
different sides of the threshold, the reason says the bound sits at the margin and which one decided.
"""

from __future__ import annotations

import math

from rlgate.engine.compare import Comparison
from rlgate.stats.bootstrap import exact_binary_interval


def deciding_interval(comp: Comparison) -> tuple[float, float]:
    """The comparison's two-sided interval at its level, free of Monte-Carlo error (see the module docstring)."""
    if not comp.paired:
        return comp.ci
    if comp.binary:
        better = int(comp.details.get("candidate_only_right", 0))
        worse = int(comp.details.get("baseline_only_right", 0))
        return exact_binary_interval(better, worse, comp.n, comp.ci_level)
    if comp.n < 2 or comp.sd_difference == 0:
        return (comp.delta, comp.delta)
    from scipy.special import stdtrit

    half = float(stdtrit(comp.n - 1, 0.5 + comp.ci_level / 2)) * comp.sd_difference / math.sqrt(comp.n)
    return (comp.delta - half, comp.delta + half)


def oriented_lower(comp: Comparison, hib: bool) -> float:
    """The deciding lower bound of the change in the metric's direction (improvement positive)."""
    lo, hi = deciding_interval(comp)
    return lo if hib else -hi


def margin_note(shown: float, deciding: float, limit: float) -> str:
    """A note when the seeded bootstrap's bound and the deciding one fall on different sides of the limit."""
    if (shown >= limit) == (deciding >= limit):
        return ""
    return (f" (at the margin: the seeded bootstrap's bound {shown:+.4g} falls on the other side; the decision uses "
            f"the exact bound {deciding:+.4g}, which no seed changes)")
