"""Configuration, environment and infrastructure rules: truncation, mismatch, gradients, stuck rewards."""

from __future__ import annotations

import numpy as np

from rlgate.monitor.findings import Finding
from rlgate.monitor.rules.base import RuleInput, fmt, make
from rlgate.monitor.trend import change, last_window, runs, surrounding_block_medians


def truncation_high(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.truncation_high
    level, window = last_window(inp.series("trunc_ratio"), inp.windows)
    if level <= cfg.max:
        return []
    return [make("truncation_high", "configuration", cfg,
                 f"{level:.1%} of responses hit the length limit over the last window (limit {cfg.max:.0%}): raise "
                 "max_response_length or penalise overlong answers; truncated answers score as wrong",
                 window=window, values={"trunc_ratio": level}, threshold={"max": cfg.max}, metrics=["trunc_ratio"])]


def truncation_rising(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.truncation_rising
    ch = change(inp.series("trunc_ratio"), inp.windows)
    w = inp.policy.window
    if ch is None or not ch.rising(cfg.min_rise, w.min_z, w.min_rho):
        return []
    return [make("truncation_rising", "configuration", cfg,
                 f"truncation ratio rose {ch.first:.1%} -> {ch.last:.1%}: responses are growing into the length limit",
                 window=(ch.first_steps[0], ch.last_steps[1]), values={"first": ch.first, "last": ch.last},
                 threshold={"min_rise": cfg.min_rise}, metrics=["trunc_ratio"])]


def train_inference_mismatch(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.train_inference_mismatch
    series = inp.series("mismatch_kl")
    level, window = last_window(series, inp.windows)
    ch = change(series, inp.windows)
    w = inp.policy.window
    grew = (ch is not None and ch.first > 0 and ch.ratio >= cfg.max_ratio and ch.rising(0.0, w.min_z, w.min_rho))
    if level <= cfg.max and not grew:
        return []
    why = f"is {fmt(level)} (limit {cfg.max})" if level > cfg.max else f"grew x{ch.ratio:.1f}" if ch else ""
    return [make("train_inference_mismatch", "infrastructure", cfg,
                 f"training/rollout logprob mismatch {why}: the inference engine and the trainer disagree (precision, "
                 "kernels, weight sync); the update is off-policy", window=window,
                 values={"mismatch": level, "ratio": ch.ratio if ch else None},
                 threshold={"max": cfg.max, "max_ratio": cfg.max_ratio}, metrics=["mismatch_kl"])]


def grad_norm_explosion(inp: RuleInput) -> list[Finding]:
    """A sustained rise of the gradient norm is a warning; a lone spike that settles is a note."""
    cfg = inp.policy.rules.grad_norm_explosion
    s = inp.series("grad_norm").finite()
    positive = s.values[s.values > 0]
    if positive.size < 2 * cfg.block:
        return []
    baseline = float(np.median(positive[: max(cfg.block, positive.size // 10)]))
    block_ref = surrounding_block_medians(s.values, cfg.block)
    full = len(s) // cfg.block
    medians = np.median(s.values[: full * cfg.block].reshape(full, cfg.block), axis=1)
    high = np.flatnonzero(medians > cfg.factor * baseline)
    if high.size:
        start = int(s.steps[high[0] * cfg.block])
        return [make("grad_norm_explosion", "infrastructure", cfg,
                     f"gradient norm rose to a median of {fmt(float(medians[high].max()))} over {cfg.block}-step "
                     f"blocks, {float(medians[high].max()) / baseline:.0f}x its early level {fmt(baseline)}: "
                     "numerics are diverging (loss scale, learning rate, bad batch)",
                     window=(start, int(s.steps[-1])),
                     values={"baseline": baseline, "block_median": float(medians[high].max())},
                     threshold={"factor": cfg.factor}, metrics=["grad_norm"])]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = s.values / block_ref
    spikes = np.flatnonzero(ratio > cfg.note_factor)
    if spikes.size == 0:
        return []
    peak = spikes[np.nanargmax(ratio[spikes])]
    return [make("grad_norm_explosion", "infrastructure", cfg,
                 f"{spikes.size} isolated gradient-norm spike(s), up to {fmt(float(s.values[peak]))} at step "
                 f"{int(s.steps[peak])} ({float(ratio[peak]):.0f}x the median around it); the norm returned to "
                 "its level at once, so this is a note", severity="info",
                 window=(int(s.steps[spikes[0]]), int(s.steps[spikes[-1]])),
                 values={"spikes": float(spikes.size), "peak": float(s.values[peak])},
                 threshold={"note_factor": cfg.note_factor}, metrics=["grad_norm"])]


def non_finite(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.non_finite
    out: list[Finding] = []
    for name, series in sorted(inp.log.metrics.items()):
        bad = np.flatnonzero(~np.isfinite(series.values))
        if bad.size == 0:
            continue
        out.append(make("non_finite", "infrastructure", cfg,
                        f"{name} ({series.source_key}) is NaN or infinite at {bad.size} step(s), first at step "
                        f"{int(series.steps[bad[0]])}: the run has diverged numerically",
                        window=(int(series.steps[bad[0]]), int(series.steps[bad[-1]])),
                        values={"metric": name, "count": float(bad.size)}, metrics=[name]))
    return out


def reward_stuck(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.reward_stuck
    reward, std = inp.series("reward_mean"), inp.series("reward_std")
    steps, ri, si = np.intersect1d(reward.steps, std.steps, return_indices=True)
    zero = (np.abs(reward.values[ri]) <= cfg.epsilon) & (np.abs(std.values[si]) <= cfg.epsilon)
    long = [(a, b) for a, b in runs(zero) if b - a + 1 >= cfg.min_run]
    if not long:
        return []
    a, b = max(long, key=lambda r: r[1] - r[0])
    ongoing = b == steps.size - 1
    return [make("reward_stuck", "environment", cfg,
                 f"reward and its spread were exactly 0 for {b - a + 1} consecutive logged steps "
                 f"({'still at the end of the log' if ongoing else 'then recovered'}): the reward function or the "
                 "environment is not returning results (crashed verifier, sandbox, parsing)",
                 severity=None if ongoing else "info", window=(int(steps[a]), int(steps[b])),
                 values={"run_length": float(b - a + 1)},
                 threshold={"epsilon": cfg.epsilon, "min_run": float(cfg.min_run)},
                 metrics=["reward_mean", "reward_std"])]


def tool_failures(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.tool_failures
    out: list[Finding] = []
    for name in ("aborted_ratio", "tool_failure_ratio"):
        series = inp.log.get(name)
        if series is None:
            continue
        s = series.finite()
        level, window = last_window(s, inp.windows)
        worst = float(s.values.max()) if len(s) else 0.0
        if level <= cfg.max and worst <= cfg.max_single:
            continue
        out.append(make("tool_failures", "environment", cfg,
                        f"{name} is {level:.1%} over the last window (worst step {worst:.1%}): rollouts are aborted or "
                        "tools fail, so those samples carry no valid reward",
                        window=window, values={"metric": name, "level": level, "worst": worst},
                        threshold={"max": cfg.max, "max_single": cfg.max_single}, metrics=[name]))
    return out


def _pinned_mask(inp: RuleInput) -> tuple[np.ndarray, np.ndarray, np.ndarray, str] | None:
    """(steps, pinned?, reward) over the steps where the spread is known; which spread was used."""
    eps = inp.policy.rules.reward_pinned.epsilon
    reward = inp.series("reward_mean")
    lo, hi = inp.log.get("reward_min"), inp.log.get("reward_max")
    if lo is not None and hi is not None:
        steps, ri, li, hi_i = _intersect3(reward.steps, lo.steps, hi.steps)
        r, a, b = reward.values[ri], lo.values[li], hi.values[hi_i]
        with np.errstate(invalid="ignore"):
            pinned = (np.abs(b - a) <= eps) & (np.abs(r - a) <= eps)
        return steps, pinned, r, "mean, min and max identical"
    std = inp.log.get("reward_std")
    if std is None:
        return None
    steps, ri, si = np.intersect1d(reward.steps, std.steps, return_indices=True)
    r, sd = reward.values[ri], std.values[si]
    with np.errstate(invalid="ignore"):
        same = np.concatenate([[False], np.abs(np.diff(r)) <= eps])
        pinned = (np.abs(sd) <= eps) & same
    # The first step of a run has no predecessor to equal; count it when the next step continues the run.
    pinned[:-1] |= pinned[1:] & (np.abs(sd[:-1]) <= eps)
    return steps, pinned, r, "spread 0 and the mean unchanged"


def _intersect3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
    ab, ai, bi = np.intersect1d(a, b, return_indices=True)
    steps, abi, ci = np.intersect1d(ab, c, return_indices=True)
    return steps, ai[abi], bi[abi], ci


def reward_pinned(inp: RuleInput) -> list[Finding]:
    """From some step on every rollout gets the same reward: a tool or the environment fails silently.

    A reward that is exactly constant across a whole batch (mean = min = max) for many steps is not
    learning, it is a fallback value (a crashed sandbox scoring everything 0, a timeout returning -1,
    a judge outage returning 0.5). A reward pinned at exactly 0 with a logged spread is left to
    `reward_stuck`, which says the same more specifically.
    """
    cfg = inp.policy.rules.reward_pinned
    got = _pinned_mask(inp)
    if got is None:
        return []
    steps, pinned, reward, how = got
    long = [(a, b) for a, b in runs(pinned) if b - a + 1 >= cfg.min_run]
    if not long:
        return []
    a, b = max(long, key=lambda r: r[1] - r[0])
    value = float(reward[a])
    if abs(value) <= cfg.epsilon and inp.log.get("reward_std") is not None:
        return []
    ongoing = b == steps.size - 1
    return [make("reward_pinned", "environment", cfg,
                 f"reward pinned at exactly {fmt(value)} ({how}) for {b - a + 1} consecutive logged steps from "
                 f"step {int(steps[a])} ({'still at the end of the log' if ongoing else 'then it moved again'}): "
                 "every rollout gets the same score, so a tool, sandbox or reward service is failing silently "
                 "and returning a fallback value",
                 severity=None if ongoing else "info", window=(int(steps[a]), int(steps[b])),
                 values={"value": value, "run_length": float(b - a + 1)},
                 threshold={"epsilon": cfg.epsilon, "min_run": float(cfg.min_run)},
                 metrics=["reward_mean"])]
