"""Every rule: a synthetic curve that trips it and a near-miss that must not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from monitor_helpers import findings_of, make_log, noisy, ramp, val_points

from rlgate.monitor.policy import MonitorPolicy
from rlgate.monitor.rules import evaluate

N = 200


def only(findings: list, rule: str) -> list:
    return [f for f in findings if f.rule == rule]


def test_non_finite_trips_on_nan_and_names_the_step() -> None:
    reward = ramp(0.1, 0.5)
    reward[57] = np.nan
    [f] = findings_of(make_log({"reward_mean": reward}), rule="non_finite")
    assert (f.severity, f.domain, f.step_start) == ("critical", "infrastructure", 57)
    assert findings_of(make_log({"reward_mean": ramp(0.1, 0.5)}), rule="non_finite") == []


def test_reward_hacking_trips_when_unbounded_reward_rises_and_heldout_falls() -> None:
    log = make_log({"reward_mean": noisy(ramp(0.5, 3.0), 0.05), "val_score/math": val_points([0.30, 0.28, 0.25, 0.2,
                                                                                               0.15, 0.1, 0.09, 0.08])})
    [f] = findings_of(log, rule="reward_hacking")
    assert (f.severity, f.domain) == ("critical", "reward")
    assert f.values["heldout_end"] == pytest.approx(0.08)
    assert "val_score/math" in f.metrics


def test_reward_hacking_near_miss_heldout_rises_with_the_reward() -> None:
    log = make_log({"reward_mean": noisy(ramp(0.5, 3.0), 0.05), "val_score/math": val_points([0.3, 0.32, 0.35, 0.36,
                                                                                               0.38, 0.37, 0.39])})
    assert findings_of(log, rule="reward_hacking") == []
    assert findings_of(log, rule="train_val_divergence") == []


def test_reward_hacking_near_miss_small_dip_from_peak_above_start() -> None:
    # Peak 0.40, ends 0.38 (a 0.02 dip, under the 0.03 peak threshold) and far above the 0.30 start.
    log = make_log({"reward_mean": noisy(ramp(0.5, 3.0), 0.05),
                    "val_score/math": val_points([0.30, 0.35, 0.39, 0.40, 0.41, 0.39, 0.38, 0.38])})
    assert findings_of(log, rule="reward_hacking") == []


def test_reward_hacking_from_peak_drop_when_reward_keeps_rising() -> None:
    log = make_log({"reward_mean": noisy(ramp(0.5, 3.0), 0.05),
                    "val_score/math": val_points([0.30, 0.40, 0.50, 0.52, 0.51, 0.45, 0.40, 0.38])})
    [f] = findings_of(log, rule="reward_hacking")
    assert f.values["heldout_peak"] > 0.5


def test_reward_out_of_range_trips_above_the_declared_max() -> None:
    log = make_log({"reward_mean": ramp(0.2, 1.3)})
    [f] = findings_of(log, {"reward_out_of_range": {"min": 0.0, "max": 1.0}}, rule="reward_out_of_range")
    assert (f.severity, f.domain) == ("critical", "reward")
    assert f.values["worst"] == pytest.approx(1.3)


def test_reward_out_of_range_near_miss_touching_the_bound() -> None:
    log = make_log({"reward_mean": ramp(0.0, 1.0)})
    assert findings_of(log, {"reward_out_of_range": {"min": 0.0, "max": 1.0}}, rule="reward_out_of_range") == []
    # Without a declared range the rule does not run at all.
    assert findings_of(make_log({"reward_mean": ramp(0.0, 9.0)}), rule="reward_out_of_range") == []


def test_train_val_divergence_on_a_verifiable_reward_is_data_domain() -> None:
    log = make_log({"reward_mean": noisy(ramp(0.01, 0.15), 0.005), "val_score/gsm8k": val_points([0.05, 0.06, 0.055,
                                                                                                   0.05, 0.045, 0.04])})
    [f] = findings_of(log, rule="train_val_divergence")
    assert (f.severity, f.domain) == ("warning", "data")
    assert findings_of(log, rule="reward_hacking") == []


def test_train_val_divergence_near_miss_drop_within_noise() -> None:
    val = val_points([0.05, 0.06, 0.055, 0.05, 0.048, 0.046])
    log = make_log({"reward_mean": noisy(ramp(0.01, 0.15), 0.005), "val_score/gsm8k": val})
    assert findings_of(log, rule="train_val_divergence") == []


def test_length_blowup_and_near_miss() -> None:
    [f] = findings_of(make_log({"len_mean": noisy(ramp(4100, 15300), 50)}), rule="length_blowup")
    assert (f.domain, f.severity) == ("reward", "warning")
    assert f.values["ratio"] > 3.0  # window medians of the ramp: about 4.6k -> 14.8k
    assert findings_of(make_log({"len_mean": noisy(ramp(300, 500), 5)}), rule="length_blowup") == []


def test_length_reward_correlation_and_near_miss() -> None:
    reward = noisy(ramp(0.1, 0.9), 0.02, seed=1)
    log = make_log({"len_mean": noisy(ramp(300, 900), 10), "reward_mean": reward})
    [f] = findings_of(log, rule="length_reward_correlation")
    assert f.values["rho"] > 0.8
    flat = np.full(N, 0.5) + np.random.default_rng(3).normal(0, 0.05, N)
    assert findings_of(make_log({"len_mean": noisy(ramp(300, 900), 10), "reward_mean": flat}),
                       rule="length_reward_correlation") == []
    assert findings_of(make_log({"len_mean": noisy(ramp(300, 380), 2), "reward_mean": reward}),
                       rule="length_reward_correlation") == []


@pytest.mark.parametrize(("reward", "kind"), [(0.01, "too hard"), (0.98, "too easy")])
def test_zero_std_too_hard_and_too_easy(reward: float, kind: str) -> None:
    log = make_log({"zero_std_frac": np.full(N, 0.8), "reward_mean": np.full(N, reward)})
    [f] = findings_of(log, {"reward_out_of_range": {"min": 0.0, "max": 1.0}}, rule="zero_std")
    assert f.domain == "data" and kind in f.message


def test_zero_std_near_misses() -> None:
    over = {"reward_out_of_range": {"min": 0.0, "max": 1.0}}
    assert findings_of(make_log({"zero_std_frac": np.full(N, 0.8), "reward_mean": np.full(N, 0.5)}), over,
                       rule="zero_std") == []
    assert findings_of(make_log({"zero_std_frac": np.full(N, 0.3), "reward_mean": np.full(N, 0.01)}), over,
                       rule="zero_std") == []


def test_reward_stuck_at_zero_is_environment() -> None:
    reward, std = ramp(0.1, 0.3), np.full(N, 0.2)
    reward[-30:], std[-30:] = 0.0, 0.0
    [f] = findings_of(make_log({"reward_mean": reward, "reward_std": std}), rule="reward_stuck")
    assert (f.domain, f.severity) == ("environment", "warning")
    recovered_r, recovered_s = reward.copy(), std.copy()
    recovered_r[-30:], recovered_s[-30:] = 0.3, 0.2
    recovered_r[50:80], recovered_s[50:80] = 0.0, 0.0
    [note] = findings_of(make_log({"reward_mean": recovered_r, "reward_std": recovered_s}), rule="reward_stuck")
    assert note.severity == "info"
    short_r, short_s = ramp(0.1, 0.3), np.full(N, 0.2)
    short_r[-10:], short_s[-10:] = 0.0, 0.0
    assert findings_of(make_log({"reward_mean": short_r, "reward_std": short_s}), rule="reward_stuck") == []


def test_tool_failures_and_near_miss() -> None:
    [f] = findings_of(make_log({"aborted_ratio": np.full(N, 0.1)}), rule="tool_failures")
    assert f.domain == "environment"
    assert findings_of(make_log({"tool_failure_ratio": np.full(N, 0.02)}), rule="tool_failures") == []


def test_grad_norm_explosion_sustained_spike_and_near_miss() -> None:
    grad = noisy(np.full(N, 2.0), 0.2)
    grad[120:] = noisy(np.full(N - 120, 50.0), 2.0)
    [f] = findings_of(make_log({"grad_norm": grad}), rule="grad_norm_explosion")
    assert (f.severity, f.domain) == ("warning", "infrastructure")
    spike = noisy(np.full(N, 2.0), 0.2)
    spike[90] = 80.0
    [note] = findings_of(make_log({"grad_norm": spike}), rule="grad_norm_explosion")
    assert note.severity == "info" and note.step_start == 90
    assert findings_of(make_log({"grad_norm": noisy(np.full(N, 2.0), 0.3)}), rule="grad_norm_explosion") == []


def test_train_inference_mismatch_and_near_miss() -> None:
    [f] = findings_of(make_log({"mismatch_kl": noisy(ramp(0.001, 0.08), 0.001)}), rule="train_inference_mismatch")
    assert f.domain == "infrastructure"
    flat = np.abs(noisy(np.full(N, 0.002), 0.0005))
    assert findings_of(make_log({"mismatch_kl": flat}), rule="train_inference_mismatch") == []


def test_kl_spike_repeated_single_and_climbing() -> None:
    base = np.abs(noisy(np.full(N, 0.05), 0.005))
    repeated = base.copy()
    repeated[[40, 80, 120, 160]] = 1.0
    [f] = findings_of(make_log({"kl_ref": repeated}), rule="kl_spike")
    assert (f.severity, f.domain) == ("warning", "algorithm")
    single = base.copy()
    single[100] = 1.0
    [note] = findings_of(make_log({"kl_ref": single}), rule="kl_spike")
    assert note.severity == "info"
    # A KL that simply climbs (early training) is not a spike.
    assert findings_of(make_log({"kl_ref": np.abs(noisy(ramp(0.0, 0.09), 0.002))}), rule="kl_spike") == []


def test_kl_negative_and_rounding_near_miss() -> None:
    kl = np.abs(noisy(np.full(N, 0.02), 0.002))
    kl[::3] = -0.01
    [f] = findings_of(make_log({"kl_ref": kl}), rule="kl_negative")
    assert f.domain == "configuration"
    rounded = np.abs(noisy(np.full(N, 0.02), 0.002))
    rounded[::3] = -0.0004
    assert findings_of(make_log({"kl_ref": rounded}), rule="kl_negative") == []


def test_kl_above_target_note_warning_and_near_miss() -> None:
    [note] = findings_of(make_log({"kl_ref": ramp(0.01, 0.2)}), rule="kl_above_target")
    assert note.severity == "info"
    [f] = findings_of(make_log({"kl_ref": ramp(0.01, 0.7)}), rule="kl_above_target")
    assert f.severity == "warning"
    assert findings_of(make_log({"kl_ref": ramp(0.01, 0.08)}), rule="kl_above_target") == []


def test_large_policy_step_kl_and_clipfrac() -> None:
    [f] = findings_of(make_log({"kl_step": np.full(N, 0.03)}), rule="large_policy_step")
    assert f.values["metric"] == "kl_step" and f.threshold["limit"] == 0.015
    [g] = findings_of(make_log({"clipfrac": np.full(N, 0.35)}), rule="large_policy_step")
    assert g.values["metric"] == "clipfrac"
    few = np.full(N, 0.005)
    few[:20] = 0.05  # 10 % of steps over the limit: under max_frac
    assert findings_of(make_log({"kl_step": few, "clipfrac": np.full(N, 0.05)}), rule="large_policy_step") == []


def test_entropy_collapse_note_and_near_miss() -> None:
    collapsed = np.concatenate([ramp(0.5, 0.01, 150), np.full(50, 0.01)])
    [f] = findings_of(make_log({"entropy": collapsed}), rule="entropy_collapse")
    assert (f.severity, f.domain) == ("warning", "algorithm")
    [note] = findings_of(make_log({"entropy": ramp(0.5, 0.06)}), rule="entropy_collapse")
    assert note.severity == "info"
    assert findings_of(make_log({"entropy": ramp(0.5, 0.3)}), rule="entropy_collapse") == []


def test_entropy_blowup_and_near_miss() -> None:
    [f] = findings_of(make_log({"entropy": noisy(ramp(0.5, 2.5), 0.02)}), rule="entropy_blowup")
    assert f.domain == "algorithm"
    assert findings_of(make_log({"entropy": noisy(ramp(0.5, 1.0), 0.02)}), rule="entropy_blowup") == []


def test_critic_explained_variance_and_early_negative_near_miss() -> None:
    [f] = findings_of(make_log({"critic_ev": ramp(0.3, -0.3)}), rule="critic_explained_variance")
    assert f.domain == "algorithm"
    assert findings_of(make_log({"critic_ev": ramp(-0.5, 0.6)}), rule="critic_explained_variance") == []


def test_truncation_high_rising_and_near_misses() -> None:
    [f] = findings_of(make_log({"trunc_ratio": np.full(N, 0.3)}), rule="truncation_high")
    assert (f.domain, f.threshold["max"]) == ("configuration", 0.1)
    assert findings_of(make_log({"trunc_ratio": np.full(N, 0.08)}), rule="truncation_high") == []
    [r] = findings_of(make_log({"trunc_ratio": np.clip(noisy(ramp(0.0, 0.09), 0.003), 0, 1)}),
                      rule="truncation_rising")
    assert r.domain == "configuration"
    flat = np.clip(noisy(np.full(N, 0.05), 0.01), 0, 1)
    assert findings_of(make_log({"trunc_ratio": flat}), rule="truncation_rising") == []


def test_disabled_rule_and_severity_override() -> None:
    log = make_log({"len_mean": ramp(300, 1500)})
    assert findings_of(log, {"length_blowup": {"enabled": False}}, rule="length_blowup") == []
    [f] = findings_of(log, {"length_blowup": {"severity": "critical"}}, rule="length_blowup")
    assert f.severity == "critical"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(60, 2000))
def test_noisy_stationary_curves_never_raise_a_warning(seed: int, n: int) -> None:
    """Healthy-looking noise (no trend, no spikes beyond Gaussian tails) must not trip any rule."""
    rng = np.random.default_rng(seed)
    log = make_log({
        "reward_mean": np.clip(0.5 + rng.normal(0, 0.05, n), 0, 1),
        "reward_std": 0.3 + rng.normal(0, 0.02, n),
        "kl_ref": np.abs(0.03 + rng.normal(0, 0.003, n)),
        "entropy": 0.4 + rng.normal(0, 0.02, n),
        "len_mean": 300 + rng.normal(0, 10, n),
        "trunc_ratio": np.clip(0.02 + rng.normal(0, 0.005, n), 0, 1),
        "grad_norm": np.abs(2 + rng.normal(0, 0.2, n)),
        "kl_step": np.abs(rng.normal(0.002, 0.001, n)),
        "val_score/x": (np.arange(0, n, 20), 0.5 + rng.normal(0, 0.005, len(range(0, n, 20)))),
    })
    serious = [f for f in findings_of(log) if f.severity != "info"]
    assert serious == []


def test_a_metric_logged_only_as_nan_is_reported_not_a_crash() -> None:
    """A run whose KL and entropy went NaN from the start (a killed, diverged run): non_finite names it, the
    rules that need those metrics say why they did not run, and none crashes on an empty finite series."""
    nan = np.full(80, np.nan)
    log = make_log({"reward_mean": ramp(0.1, 0.5, 80), "reward_std": ramp(0.2, 0.1, 80), "kl": nan,
                    "entropy": nan, "response_length/clip_ratio": nan, "actor/grad_norm": nan})
    found, statuses = evaluate(log, MonitorPolicy())
    assert {f.rule for f in found if f.severity == "critical"} == {"non_finite"}
    reasons = {s.rule: s.reason for s in statuses if not s.evaluated}
    assert reasons["kl_spike"] == "kl_ref logged with no finite value"
    assert reasons["entropy_collapse"] == "entropy logged with no finite value"
    assert reasons["truncation_high"] == "trunc_ratio logged with no finite value"
    assert {s.rule for s in statuses if s.evaluated} >= {"non_finite", "reward_stuck", "reward_pinned"}
