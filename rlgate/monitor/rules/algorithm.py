"""Algorithm and configuration rules: KL, policy step size, entropy, the critic."""

from __future__ import annotations

import numpy as np

from rlgate.monitor.findings import Finding
from rlgate.monitor.rules.base import RuleInput, fmt, make
from rlgate.monitor.trend import change, last_window, surrounding_block_medians


def kl_spike(inp: RuleInput) -> list[Finding]:
    """KL far above its own recent median; isolated spikes are noted, repeated ones are a warning."""
    cfg = inp.policy.rules.kl_spike
    s = inp.series("kl_ref").finite()
    if len(s) < 2 * cfg.block:
        return []
    ref = surrounding_block_medians(s.values, cfg.block)
    with np.errstate(invalid="ignore"):
        spikes = np.flatnonzero((s.values > cfg.factor * np.maximum(ref, 0)) & (s.values > cfg.min_value))
    if spikes.size == 0:
        return []
    peak = spikes[np.argmax(s.values[spikes])]
    repeated = spikes.size >= cfg.min_count
    message = (f"KL to the reference spiked {spikes.size} time(s), up to {fmt(float(s.values[peak]))} at step "
               f"{int(s.steps[peak])} ({float(s.values[peak] / max(ref[peak], 1e-12)):.0f}x the median around it)")
    message += (": the update is unstable (learning rate, batch size or KL coefficient)" if repeated
                else f"; fewer than {cfg.min_count} spikes, and the KL returned to its level, so this is a note")
    return [make("kl_spike", "algorithm", cfg, message, severity=None if repeated else "info",
                 window=(int(s.steps[spikes[0]]), int(s.steps[spikes[-1]])),
                 values={"spikes": float(spikes.size), "peak": float(s.values[peak]),
                         "recent_median": float(ref[peak])},
                 threshold={"factor": cfg.factor, "min_value": cfg.min_value, "min_count": float(cfg.min_count)},
                 metrics=["kl_ref"])]


def kl_negative(inp: RuleInput) -> list[Finding]:
    """A KL estimate below zero on many steps: wrong estimator, or logprobs from mismatched models."""
    cfg = inp.policy.rules.kl_negative
    s = inp.series("kl_ref").finite()
    neg = s.values < -cfg.tolerance
    frac = float(neg.mean()) if len(s) else 0.0
    if frac < cfg.max_frac:
        return []
    idx = np.flatnonzero(neg)
    return [make("kl_negative", "configuration", cfg,
                 f"KL to the reference is negative on {frac:.0%} of steps (min {fmt(float(s.values.min()))}): check "
                 "the KL estimator and that the reference and rollout logprobs come from the right models",
                 window=(int(s.steps[idx[0]]), int(s.steps[idx[-1]])),
                 values={"negative_frac": frac, "min": float(s.values.min())},
                 threshold={"tolerance": cfg.tolerance, "max_frac": cfg.max_frac}, metrics=["kl_ref"])]


def kl_above_target(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.kl_above_target
    level, window = last_window(inp.series("kl_ref"), inp.windows)
    if level <= cfg.target:
        return []
    if level > cfg.blowup_factor * cfg.target:
        return [make("kl_above_target", "configuration", cfg,
                     f"KL to the reference is {fmt(level)}, {level / cfg.target:.1f}x the target {cfg.target}: the "
                     "policy has drifted far from the reference (raise the KL coefficient or lower the learning rate)",
                     severity="warning" if cfg.severity == "info" else cfg.severity, window=window,
                     values={"kl": level}, threshold={"target": cfg.target, "blowup_factor": cfg.blowup_factor},
                     metrics=["kl_ref"])]
    return [make("kl_above_target", "configuration", cfg,
                 f"KL to the reference ended at {fmt(level)}, above the target {cfg.target} (verl's adaptive KL "
                 f"default) but below {cfg.blowup_factor:g}x it: drift this size is common with a small or fixed KL "
                 "coefficient",
                 window=window, values={"kl": level},
                 threshold={"target": cfg.target, "blowup_factor": cfg.blowup_factor}, metrics=["kl_ref"])]


def large_policy_step(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.large_policy_step
    out: list[Finding] = []
    for name, limit in (("kl_step", cfg.max_kl_step), ("clipfrac", cfg.max_clipfrac)):
        series = inp.log.get(name)
        if series is None:
            continue
        s = series.finite()
        over = s.values > limit
        frac = float(over.mean()) if len(s) else 0.0
        if frac < cfg.max_frac:
            continue
        idx = np.flatnonzero(over)
        out.append(make("large_policy_step", "algorithm", cfg,
                        f"{name} exceeds {limit} on {frac:.0%} of steps (median {fmt(float(np.median(s.values)))}): "
                        "each update moves the policy too far (lower the learning rate or the PPO epochs)",
                        window=(int(s.steps[idx[0]]), int(s.steps[idx[-1]])),
                        values={"metric": name, "frac_over": frac, "max": float(s.values.max())},
                        threshold={"limit": limit, "max_frac": cfg.max_frac}, metrics=[name]))
    return out


def entropy_collapse(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.entropy_collapse
    ch = change(inp.series("entropy"), inp.windows)
    if ch is None or ch.first <= 0:
        return []
    ratio = ch.last / ch.first
    window = (ch.first_steps[0], ch.last_steps[1])
    values = {"first": ch.first, "last": ch.last, "ratio": ratio}
    threshold = {"min_value": cfg.min_value, "max_ratio": cfg.max_ratio, "note_ratio": cfg.note_ratio}
    if ch.last < cfg.min_value and ratio < cfg.max_ratio:
        return [make("entropy_collapse", "algorithm", cfg,
                     f"policy entropy collapsed {fmt(ch.first)} -> {fmt(ch.last)} ({ratio:.0%} of its start): "
                     "exploration has stopped (entropy bonus, temperature, clip-higher)",
                     window=window, values=values, threshold=threshold, metrics=["entropy"])]
    if ratio < cfg.note_ratio:
        return [make("entropy_collapse", "algorithm", cfg,
                     f"policy entropy fell to {ratio:.0%} of its start ({fmt(ch.first)} -> {fmt(ch.last)}) but stayed "
                     f"above the collapse floor {cfg.min_value}: usual as an RL policy sharpens; watch it",
                     severity="info", window=window, values=values, threshold=threshold, metrics=["entropy"])]
    return []


def entropy_blowup(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.entropy_blowup
    ch = change(inp.series("entropy"), inp.windows)
    w = inp.policy.window
    if ch is None or ch.first <= 0 or ch.ratio < cfg.max_ratio or not ch.rising(0.0, w.min_z, w.min_rho):
        return []
    return [make("entropy_blowup", "algorithm", cfg,
                 f"policy entropy rose x{ch.ratio:.1f} ({fmt(ch.first)} -> {fmt(ch.last)}): the policy is "
                 "degenerating towards random text (entropy bonus too high, or an unstable update)",
                 window=(ch.first_steps[0], ch.last_steps[1]), values={"first": ch.first, "last": ch.last},
                 threshold={"max_ratio": cfg.max_ratio}, metrics=["entropy"])]


def critic_explained_variance(inp: RuleInput) -> list[Finding]:
    cfg = inp.policy.rules.critic_explained_variance
    level, window = last_window(inp.series("critic_ev"), inp.windows)
    if level >= cfg.min:
        return []
    return [make("critic_explained_variance", "algorithm", cfg,
                 f"critic explained variance is {fmt(level)} over the last window: the value function predicts "
                 "returns worse than a constant, so advantages are noise (critic learning rate, warm-up)",
                 window=window, values={"explained_variance": level}, threshold={"min": cfg.min},
                 metrics=["critic_ev"])]
