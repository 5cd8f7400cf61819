"""Pure statistics for paired model comparisons (numpy; scipy imported inside the functions that use it).

Nothing here knows about contracts or gates: arrays and counts in, numbers out, RNG passed in.
"""

from rlgate.stats.bootstrap import bootstrap_paired_binary, bootstrap_paired_mean, percentile_interval
from rlgate.stats.distributions import normal_quantile
from rlgate.stats.intervals import wilson_interval
from rlgate.stats.multiple import holm
from rlgate.stats.paired_tests import mcnemar_exact, paired_t, wilcoxon_signed_rank
from rlgate.stats.passk import maj_at_k, pass_at_k
from rlgate.stats.power import mde_one_sample, mde_paired

__all__ = [
    "bootstrap_paired_binary",
    "bootstrap_paired_mean",
    "holm",
    "maj_at_k",
    "mcnemar_exact",
    "mde_one_sample",
    "mde_paired",
    "normal_quantile",
    "paired_t",
    "pass_at_k",
    "percentile_interval",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
