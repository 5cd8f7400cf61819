"""Canonical names and the aliases the issue lists, per framework."""

from __future__ import annotations

import pytest

from rlgate.monitor.policy import RULE_NAMES
from rlgate.monitor.rules import RULES
from rlgate.monitor.vocabulary import ALIASES, alias_table, classify


@pytest.mark.parametrize(("key", "canonical"), [
    # verl
    ("critic/score/mean", "reward_mean"), ("actor/entropy", "entropy"), ("actor/entropy_loss", "entropy"),
    ("response_length/mean", "len_mean"), ("response_length/clip_ratio", "trunc_ratio"),
    ("val-core/openai/gsm8k/acc/mean@16", "val_score/openai/gsm8k"), ("val/test_score/openai/gsm8k",
                                                                     "val_score/openai/gsm8k"),
    ("actor/ppo_kl", "kl_step"), ("actor/pg_clipfrac", "clipfrac"), ("actor/grad_norm", "grad_norm"),
    ("critic/vf_explained_var", "critic_ev"), ("response/aborted_ratio", "aborted_ratio"),
    ("training/rollout_probs_diff_mean", "mismatch_kl"), ("actor/lr", "lr"),
    # TRL
    ("reward", "reward_mean"), ("reward_std", "reward_std"), ("kl", "kl_ref"), ("entropy", "entropy"),
    ("completions/mean_length", "len_mean"), ("completion_length", "len_mean"),
    ("completions/clipped_ratio", "trunc_ratio"), ("frac_reward_zero_std", "zero_std_frac"),
    ("grad_norm", "grad_norm"), ("learning_rate", "lr"), ("eval_reward", "val_score/reward"),
    # OpenRLHF
    ("train/reward", "reward_mean"), ("train/kl", "kl_ref"), ("train/response_length", "len_mean"),
    ("train/truncated", "trunc_ratio"), ("eval/gsm8k_pass1", "val_score/gsm8k_pass1"),
    # HF TensorBoard prefixes
    ("train/completions/mean_length", "len_mean"), ("train/frac_reward_zero_std", "zero_std_frac"),
])
def test_aliases(key: str, canonical: str) -> None:
    match = classify(key)
    assert match is not None and match.canonical == canonical


@pytest.mark.parametrize("key", ["timing_s/step", "eval/loss", "eval_runtime", "val-core/x/acc/std@4",
                                 "critic/values/mean", "val-aux/x/reward/mean@1"])
def test_non_metrics_stay_unknown(key: str) -> None:
    assert classify(key) is None


def test_preference_and_scale() -> None:
    assert classify("actor/entropy").rank < classify("actor/entropy_loss").rank  # type: ignore[union-attr]
    assert classify("completions/mean_length").rank < classify("completion_length").rank  # type: ignore[union-attr]
    assert classify("val-core/d/acc/mean@1").rank < classify("val-core/d/reward/mean@1").rank  # type: ignore[union-attr]
    assert classify("actor/lr(1e-4)").scale == 1e-4  # type: ignore[union-attr]


def test_every_canonical_name_has_aliases_and_every_rule_is_configured() -> None:
    assert {"reward_mean", "reward_std", "reward_min", "reward_max", "zero_std_frac", "kl_ref", "kl_step", "entropy",
            "clipfrac", "len_mean", "trunc_ratio", "grad_norm", "lr", "mismatch_kl", "aborted_ratio",
            "tool_failure_ratio", "critic_ev"} == set(ALIASES)
    assert {r.name for r in RULES} == set(RULE_NAMES)
    assert len(alias_table()) > 60
