"""Canonical metric names and the keys each framework logs them under.

Frameworks name the same quantity differently (verl `critic/score/mean`, TRL `reward`, OpenRLHF
`train/reward`) and rename it between versions (verl `actor/entropy_loss` -> `actor/entropy`, TRL
`completion_length` -> `completions/mean_length`). Rules only ever see canonical names. Where a log
holds several aliases of one quantity the earliest in the list wins; the others are kept as extra keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VAL_PREFIX = "val_score/"

#: canonical name -> (alias, framework) in order of preference.
ALIASES: dict[str, list[tuple[str, str]]] = {
    "reward_mean": [
        ("critic/score/mean", "verl"), ("reward", "trl"), ("train/reward", "openrlhf"),
        ("objective/scores", "trl-ppo"), ("reward_mean", "generic"), ("train/reward_mean", "generic"),
        ("env/reward_mean", "generic"), ("critic/rewards/mean", "verl"),
        ("env/all/reward/total", "tinker-cookbook"), ("reward/mean", "tinker-cookbook"),
        ("reward/total", "tinker-cookbook recipes/rl_loop"),
    ],
    "reward_std": [
        ("critic/score/std", "verl"), ("reward_std", "trl"), ("train/reward_std", "openrlhf"),
        ("reward/std", "tinker-cookbook"),
    ],
    "reward_min": [
        ("critic/score/min", "verl"), ("reward/min", "tinker-cookbook"), ("reward_min", "generic"),
        ("train/reward_min", "generic"),
    ],
    "reward_max": [
        ("critic/score/max", "verl"), ("reward/max", "tinker-cookbook"), ("reward_max", "generic"),
        ("train/reward_max", "generic"),
    ],
    "zero_std_frac": [
        ("frac_reward_zero_std", "trl"), ("zero_std_frac", "generic"), ("train/zero_std_frac", "generic"),
    ],
    "kl_ref": [
        ("actor/kl_loss", "verl"), ("critic/kl", "verl"), ("kl", "trl"), ("objective/kl", "trl-ppo"),
        ("train/kl", "openrlhf"), ("kl_ref", "generic"),
    ],
    "kl_step": [
        ("actor/ppo_kl", "verl"), ("policy/approxkl_avg", "trl-ppo"), ("train/ppo_kl", "openrlhf"),
        ("approx_kl", "generic"), ("kl_step", "generic"),
    ],
    "entropy": [
        ("actor/entropy", "verl"), ("actor/entropy_loss", "verl (older)"), ("entropy", "trl"),
        ("objective/entropy", "trl-ppo"), ("policy/entropy_avg", "trl-ppo"), ("train/entropy", "openrlhf"),
        ("train/policy_entropy", "openrlhf"), ("policy/entropy", "tinker-cookbook"),
        ("optim/entropy", "tinker-cookbook"),
    ],
    "clipfrac": [
        ("actor/pg_clipfrac", "verl"), ("clip_ratio/region_mean", "trl"), ("clip_ratio", "trl (older)"),
        ("policy/clipfrac_avg", "trl-ppo"), ("train/ppo_clip_ratio", "openrlhf"), ("train/clip_ratio", "openrlhf"),
        ("clipfrac", "generic"),
    ],
    "len_mean": [
        ("response_length/mean", "verl"), ("completions/mean_length", "trl"),
        ("completion_length", "trl (older)"), ("train/response_length", "openrlhf"), ("len_mean", "generic"),
        ("response_length", "generic"), ("env/all/ac_tokens_per_turn", "tinker-cookbook"),
    ],
    "trunc_ratio": [
        ("response_length/clip_ratio", "verl"), ("completions/clipped_ratio", "trl"),
        ("train/truncated", "openrlhf"), ("trunc_ratio", "generic"), ("truncation_ratio", "generic"),
    ],
    "grad_norm": [
        ("actor/grad_norm", "verl"), ("grad_norm", "trl"), ("train/grad_norm", "openrlhf"),
        ("policy/grad_norm", "generic"), ("skyrl.ai/grad_norm", "SkyRL tinker-compatible server"),
    ],
    "lr": [
        ("actor/lr", "verl"), ("actor/lr(1e-4)", "verl (older, value x 1e4)"), ("learning_rate", "trl"),
        ("train/actor_lr", "openrlhf"), ("optim/lr", "tinker-cookbook"), ("lr", "generic"),
        ("skyrl.ai/learning_rate", "SkyRL tinker-compatible server"),
    ],
    "mismatch_kl": [
        ("rollout_corr/kl", "verl"), ("training/rollout_probs_diff_mean", "verl (older)"),
        ("sampling/sampling_logp_difference/mean", "trl"), ("train/mismatch_kl", "generic"),
        ("mismatch_kl", "generic"), ("optim/kl_sample_train_v2", "tinker-cookbook"),
        ("optim/kl_sample_train_v1", "tinker-cookbook"),
    ],
    "aborted_ratio": [
        ("response/aborted_ratio", "verl"), ("train/aborted_ratio", "generic"), ("aborted_ratio", "generic"),
    ],
    "tool_failure_ratio": [
        ("tool/failure_ratio", "generic"), ("train/tool_failure_ratio", "generic"),
        ("tool_failure_ratio", "generic"),
    ],
    "critic_ev": [
        ("critic/vf_explained_var", "verl"), ("val/explained_var", "generic"),
        ("explained_variance", "generic"), ("critic_ev", "generic"),
    ],
}

#: canonical name -> the keys whose sum it is, where a framework logs it in parts. tinker-cookbook's
#: `by_group` fractions split groups into mixed, all good and all bad (all rewards equal); the all-equal
#: groups are exactly those with zero reward variance.
DERIVED: dict[str, tuple[str, ...]] = {
    "zero_std_frac": ("env/all/by_group/frac_all_good", "env/all/by_group/frac_all_bad"),
}

#: Held-out score keys (one canonical series per dataset: `val_score/<dataset>`).
VAL_PATTERNS: list[tuple[str, str]] = [
    ("val-core/<ds>/acc/mean@N", "verl"),
    ("val-core/<ds>/reward/mean@N", "verl"),
    ("val/test_score/<ds>", "verl (older)"),
    ("test_score/<ds>", "verl (oldest)"),
    ("eval/<ds>", "openrlhf / HF TensorBoard"),
    ("eval_<name>", "trl"),
    ("test/env/<ds>/reward/total", "tinker-cookbook"),
    ("val/<name>", "generic (W&B, MLflow)"),
    ("val_score/<ds>", "generic"),
]

CANONICAL = (*ALIASES, "val_score")

_SCALED = re.compile(r"^(?P<base>.+)\((?P<scale>[0-9.]+e[-+]?[0-9]+)\)$")
_VAL_CORE = re.compile(r"^val-core/(?P<ds>.+)/(?P<var>[^/]+)/mean@(?P<n>\d+)$")
_VAL_OLD = re.compile(r"^(?:val/)?test_score/(?P<ds>.+)$")
_VAL_TINKER = re.compile(r"^test/env/(?P<ds>.+)/reward/total$")
#: Bookkeeping prefixes of the tinker-cookbook logger: known, never a metric a rule judges.
BOOKKEEPING_PREFIXES = ("progress/", "time/", "_runtime", "_timestamp")
#: eval keys that are bookkeeping, not scores.
_EVAL_NOT_SCORE = {"loss", "runtime", "samples_per_second", "steps_per_second", "epoch", "global_step", "step"}
_VAL_VAR_RANK = {"acc": 0, "reward": 1, "score": 2}

_LOOKUP: dict[str, tuple[str, int]] = {
    alias: (canonical, rank) for canonical, aliases in ALIASES.items() for rank, (alias, _) in enumerate(aliases)
}


@dataclass(frozen=True)
class Match:
    """Where a raw key lands: its canonical name, its preference rank and a unit scale."""

    canonical: str
    rank: int
    scale: float = 1.0


def _val_match(key: str) -> Match | None:
    core = _VAL_CORE.match(key)
    if core:
        rank = _VAL_VAR_RANK.get(core.group("var"))
        return None if rank is None else Match(VAL_PREFIX + core.group("ds"), rank)
    old = _VAL_OLD.match(key)
    if old:
        return Match(VAL_PREFIX + old.group("ds"), 5 if key.startswith("val/") else 6)
    tinker = _VAL_TINKER.match(key)
    if tinker:
        return Match(VAL_PREFIX + tinker.group("ds"), 4)
    if key.startswith(VAL_PREFIX) and len(key) > len(VAL_PREFIX):
        return Match(key, 7)
    for rank, prefix in ((8, "eval/"), (8, "eval_"), (9, "val/")):
        if key.startswith(prefix):
            name = key[len(prefix):]
            if name and name not in _EVAL_NOT_SCORE and not name.startswith("rewards/") and "loss" not in name:
                return Match(VAL_PREFIX + name, rank)
    return None


def classify(key: str) -> Match | None:
    """The canonical metric a raw key is an alias of, or None for keys outside the vocabulary."""
    hit = _LOOKUP.get(key)
    if hit is not None:
        scaled = _SCALED.match(key)
        return Match(hit[0], hit[1], float(scaled.group("scale")) if scaled else 1.0)
    val = _val_match(key)
    if val is not None:
        return val
    # HF's TensorBoard callback prefixes every training key with "train/" (train/reward, train/kl, ...).
    if key.startswith("train/"):
        inner = _LOOKUP.get(key[len("train/"):])
        if inner is not None:
            return Match(inner[0], inner[1] + 100)
    return None


def alias_table() -> list[tuple[str, str, str]]:
    """(canonical, alias, framework) rows for documentation and `rlgate monitor --help` output."""
    rows = [(c, a, f) for c, aliases in ALIASES.items() for a, f in aliases]
    rows += [("val_score/<ds>", pattern, fw) for pattern, fw in VAL_PATTERNS]
    return rows


def examples(canonical: str, n: int = 3) -> str:
    """A canonical name with a few of the log keys it is read from, for "needs" messages."""
    if canonical == "val_score":
        return "val_score (a held-out score, e.g. " + ", ".join(p for p, _ in VAL_PATTERNS[:n]) + ")"
    aliases = [a for a, _ in ALIASES.get(canonical, [])][:n]
    return f"{canonical} (e.g. {', '.join(aliases)})" if aliases else canonical
