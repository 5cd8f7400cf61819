"""Reward and data rules: reward up while held-out down, reward out of range, degenerate groups, length."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlgate.monitor.findings import Finding
from rlgate.monitor.policy import RewardHacking
from rlgate.monitor.rules.base import RuleInput, fmt, make
from rlgate.monitor.series import Series
from rlgate.monitor.trend import MAD_TO_SD, Change, bin_medians, change, last_window, mad, spearman


@dataclass(frozen=True)
class HeldOutDrop:
    """A held-out score that ended below its start or well below its peak ("drop"), or that did not
    improve while the reward rose ("flat")."""

    dataset: str
    start: float
    start_step: int
    peak: float
    peak_step: int
    end: float
    end_step: int
    from_start: float
    from_peak: float
    kind: str = "drop"


def _heldout_drop(dataset: str, val: Series, cfg: RewardHacking, reward_gain: float) -> HeldOutDrop | None:
    s = val.finite()
    if len(s) < 2:
        return None
    v = s.values
    start, end = float(v[0]), float(v[-1])
    # Peak and recent level on short moving means, so one lucky or unlucky evaluation does not decide.
    k = min(3, v.size)
    smooth = np.convolve(v, np.ones(k) / k, mode="valid")
    peak_i = int(np.argmax(smooth))
    peak = float(smooth[peak_i])
    recent = float(np.mean(v[-min(2, v.size):]))
    from_start, from_peak = start - end, peak - recent
    dropped = from_start >= cfg.min_heldout_drop or (
        from_peak >= cfg.min_peak_drop and peak_i + k - 1 < v.size - 1) or _relative_fall(v, cfg)
    flat = end - start <= cfg.max_heldout_gain * reward_gain
    if not dropped and not flat:
        return None
    return HeldOutDrop(dataset, start, int(s.steps[0]), peak, int(s.steps[peak_i + k // 2]), end,
                       int(s.steps[-1]), from_start, from_peak, "drop" if dropped else "flat")


def _relative_fall(v: np.ndarray, cfg: RewardHacking) -> bool:
    """A fall judged against the score's own scale and noise, not an absolute threshold: the mean of the last
    evaluations below the mean of the first by `min_relative_drop` of that start, and by `min_drop_z` times
    the noise of such a difference (the scatter of step-to-step changes, which a steady trend does not
    inflate), with the evaluations ranked falling over the run."""
    if v.size < 5:
        return False
    k = max(2, v.size // 4)
    head, tail = float(np.mean(v[:k])), float(np.mean(v[-k:]))
    fall = head - tail
    if head <= 0 or fall < cfg.min_relative_drop * head:
        return False
    steps = np.diff(v)
    # The larger of the robust and the plain scatter: a few large jumps (a small, coarse eval set) count as noise.
    sigma = max(MAD_TO_SD * mad(steps), float(np.std(steps))) / np.sqrt(2.0)
    if sigma <= 0:
        sigma = 1e-12 * head
    z = fall / (sigma * np.sqrt(2.0 / k))
    return z >= cfg.min_drop_z and spearman(np.arange(v.size, dtype=float), v) <= -0.5


def _reward_rise(inp: RuleInput, min_rise: float) -> Change | None:
    reward = inp.log.get("reward_mean")
    if reward is None:
        return None
    ch = change(reward, inp.windows)
    w = inp.policy.window
    return ch if ch is not None and ch.rising(min_rise, w.min_z, w.min_rho) else None


def declared_range(inp: RuleInput) -> tuple[float | None, float | None]:
    cfg = inp.policy.rules.reward_out_of_range
    return cfg.min, cfg.max


def _verifiable(inp: RuleInput, setting: str) -> bool:
    """A verifier's reward (correct / incorrect) cannot be gamed the way a learned reward can."""
    if setting != "auto":
        return setting == "yes"
    lo, hi = declared_range(inp)
    if lo is not None and hi is not None:
        return lo >= 0.0 and hi <= 1.0
    values = inp.series("reward_mean").finite().values
    return bool(values.size) and float(values.min()) >= 0.0 and float(values.max()) <= 1.0


def exploit_evidence(inp: RuleInput) -> list[str]:
    """Signs that the policy found a way to raise the reward without solving the task."""
    notes: list[str] = []
    lo, hi = declared_range(inp)
    reward = inp.series("reward_mean").finite().values
    tol = inp.policy.rules.reward_out_of_range.tolerance
    if reward.size and ((hi is not None and reward.max() > hi + tol) or (lo is not None and reward.min() < lo - tol)):
        notes.append("reward left its declared range")
    length = inp.log.get("len_mean")
    if length is not None:
        ch = change(length, inp.windows)
        if ch is not None and ch.first > 0 and ch.ratio >= inp.policy.rules.length_blowup.max_ratio:
            notes.append(f"response length x{ch.ratio:.1f}")
    trunc = inp.log.get("trunc_ratio")
    if trunc is not None:
        level, _ = last_window(trunc, inp.windows)
        if level > inp.policy.rules.truncation_high.max:
            notes.append(f"truncation at {level:.1%}")
    return notes


def _unit_scale(series: Series) -> bool:
    values = series.finite().values
    return bool(values.size) and float(values.min()) >= 0.0 and float(values.max()) <= 1.0


def _gap_evidence(rise: Change, d: HeldOutDrop, cfg: RewardHacking) -> str | None:
    """A proxy reward far above a held-out (or true) score that did not improve: the proxy is gamed."""
    gap = rise.last - d.end
    if gap < cfg.min_proxy_gap or d.end - d.start > cfg.max_heldout_gain * rise.delta:
        return None
    return (f"reward ends {fmt(gap)} above held-out {d.dataset}, which did not follow it: the gains are the "
            "reward's, not the task's")


def _divergence(inp: RuleInput, rule: str) -> list[Finding]:
    cfg = inp.policy.rules.reward_hacking if rule == "reward_hacking" else inp.policy.rules.train_val_divergence
    rise = _reward_rise(inp, cfg.min_reward_rise)
    if rise is None:
        return []
    # "Did not improve" compares gains only where the reward and the score share a [0, 1] scale.
    comparable = _unit_scale(inp.series("reward_mean"))
    drops = [d for name, val in inp.log.val_scores().items()
             if (d := _heldout_drop(name, val, cfg, rise.delta if comparable and _unit_scale(val) else -1.0))
             is not None]
    if not drops:
        return []
    shared = exploit_evidence(inp)
    verifiable = _verifiable(inp, cfg.verifiable)
    out = []
    for d in drops:
        gap = _gap_evidence(rise, d, cfg)
        evidence = [*shared, *([gap] if gap else [])]
        hacking = bool(evidence) or (not verifiable and d.kind == "drop")
        if hacking != (rule == "reward_hacking") or (d.kind == "flat" and not hacking):
            continue
        if d.kind == "flat":
            what = f"did not improve ({fmt(d.start)} -> {fmt(d.end)})"
        elif d.from_start > 0 and (d.from_start >= cfg.min_heldout_drop or d.from_peak < cfg.min_peak_drop):
            what = f"ended {fmt(d.end)}, below its start {fmt(d.start)}"
        else:
            what = f"fell from {fmt(d.peak)} (step {d.peak_step}) to {fmt(d.end)}"
        if hacking:
            why = "; ".join(evidence) if evidence else "the reward is not a verifier's"
            message = (f"reward hacking: training reward rose {fmt(rise.first)} -> {fmt(rise.last)} while held-out "
                       f"{d.dataset} {what} ({why})")
        else:
            message = (f"training reward rose {fmt(rise.first)} -> {fmt(rise.last)} on a verifiable task while "
                       f"validation {d.dataset} {what}: the training gains do not transfer (training and validation "
                       "data differ in difficulty or distribution, leakage, or overfitting)")
        out.append(make(rule, "reward" if hacking else "data", cfg, message,
                        window=(min(d.start_step, rise.first_steps[0]), d.end_step),
                        values={"reward_first": rise.first, "reward_last": rise.last, "heldout_start": d.start,
                                "heldout_peak": d.peak, "heldout_end": d.end, "dataset": d.dataset,
                                "evidence": "; ".join(evidence) or None},
                        threshold={"min_reward_rise": cfg.min_reward_rise, "min_heldout_drop": cfg.min_heldout_drop,
                                   "min_peak_drop": cfg.min_peak_drop,
                                   "min_proxy_gap": cfg.min_proxy_gap},
                        metrics=["reward_mean", f"val_score/{d.dataset}"]))
    return out


def reward_hacking(inp: RuleInput) -> list[Finding]:
    return _divergence(inp, "reward_hacking")


def train_val_divergence(inp: RuleInput) -> list[Finding]:
    return _divergence(inp, "train_val_divergence")


def reward_out_of_range(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.reward_out_of_range
    if cfg.min is None and cfg.max is None:
        return []
    s = inp.series("reward_mean").finite()
    above = s.values > cfg.max + cfg.tolerance if cfg.max is not None else np.zeros(len(s), bool)
    below = s.values < cfg.min - cfg.tolerance if cfg.min is not None else np.zeros(len(s), bool)
    bad = np.flatnonzero(above | below)
    if bad.size == 0:
        return []
    worst = float(s.values[bad[np.argmax(np.abs(s.values[bad]))]])
    return [make("reward_out_of_range", "reward", cfg,
                 f"mean reward {fmt(worst)} is outside its declared range [{cfg.min}, {cfg.max}] at {bad.size} "
                 f"step(s): the reward function is broken or being exploited",
                 window=(int(s.steps[bad[0]]), int(s.steps[bad[-1]])),
                 values={"worst": worst, "steps_outside": float(bad.size), "first": float(s.values[0])},
                 threshold={"min": cfg.min, "max": cfg.max}, metrics=["reward_mean"])]


def zero_std(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.zero_std
    frac, window = last_window(inp.series("zero_std_frac"), inp.windows)
    if frac < cfg.max_frac:
        return []
    reward = inp.series("reward_mean").finite()
    level, _ = last_window(reward, inp.windows)
    lo, hi = declared_range(inp)
    if lo is None and hi is None and _unit_scale(reward):  # a success-rate reward: its range is [0, 1]
        lo, hi = 0.0, 1.0
    lo = float(reward.values.min()) if lo is None else lo
    hi = float(reward.values.max()) if hi is None else hi
    span = hi - lo
    if span <= 0:
        return []
    if level <= lo + cfg.near_edge * span:
        kind = "too hard: almost every group fails, so there is no learning signal"
    elif level >= hi - cfg.near_edge * span:
        kind = "too easy: almost every group succeeds, so there is no learning signal"
    else:
        return []
    return [make("zero_std", "data", cfg,
                 f"{frac:.0%} of groups have zero reward variance with mean reward {fmt(level)}: the data is {kind}",
                 window=window, values={"zero_std_frac": frac, "reward": level},
                 threshold={"max_frac": cfg.max_frac, "near_edge": cfg.near_edge},
                 metrics=["zero_std_frac", "reward_mean"])]


def length_blowup(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.length_blowup
    ch = change(inp.series("len_mean"), inp.windows)
    if ch is None or ch.first <= 0 or ch.ratio < cfg.max_ratio:
        return []
    return [make("length_blowup", "reward", cfg,
                 f"mean response length grew x{ch.ratio:.1f} ({fmt(ch.first)} -> {fmt(ch.last)} tokens): the reward "
                 "likely pays for length", window=(ch.first_steps[0], ch.last_steps[1]),
                 values={"first": ch.first, "last": ch.last, "ratio": ch.ratio},
                 threshold={"max_ratio": cfg.max_ratio}, metrics=["len_mean"])]


def length_reward_correlation(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.length_reward_correlation
    length, reward = inp.series("len_mean").finite(), inp.series("reward_mean").finite()
    steps, li, ri = np.intersect1d(length.steps, reward.steps, return_indices=True)
    if steps.size < 10:
        return []
    joined_l = type(length)("len_mean", length.source_key, steps, length.values[li])
    joined_r = type(reward)("reward_mean", reward.source_key, steps, reward.values[ri])
    ch = change(joined_l, inp.windows)
    if ch is None or ch.first <= 0 or ch.ratio < cfg.min_growth:
        return []
    _, lb = bin_medians(joined_l, inp.policy.window.bins)
    _, rb = bin_medians(joined_r, inp.policy.window.bins)
    rho = spearman(lb, rb)
    if rho < cfg.min_rho:
        return []
    return [make("length_reward_correlation", "reward", cfg,
                 f"reward tracks response length (Spearman rho {rho:.2f}) while length grew x{ch.ratio:.1f}: the "
                 "reward is being earned by writing more", window=(int(steps[0]), int(steps[-1])),
                 values={"rho": rho, "length_growth": ch.ratio},
                 threshold={"min_rho": cfg.min_rho, "min_growth": cfg.min_growth}, metrics=["len_mean", "reward_mean"])]
