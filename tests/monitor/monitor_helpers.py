"""Synthetic training curves and log files for the monitor tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from rlgate.monitor.policy import MonitorPolicy, apply_overrides
from rlgate.monitor.rules import evaluate
from rlgate.monitor.series import SeriesBuilder, TrainingLog

Curve = Sequence[float] | np.ndarray


def ramp(a: float, b: float, n: int = 200) -> np.ndarray:
    return np.linspace(a, b, n)


def noisy(values: Curve, scale: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    arr = np.asarray(values, dtype=float)
    return arr + rng.normal(0.0, scale, arr.size)


def make_log(curves: Mapping[str, Curve | tuple[Curve, Curve]], fmt: str = "synthetic") -> TrainingLog:
    """A TrainingLog from raw keys; a value is a curve over steps 0..n-1 or a (steps, values) pair."""
    builder = SeriesBuilder()
    for key, curve in curves.items():
        if isinstance(curve, tuple):
            steps, values = np.asarray(curve[0], dtype=np.int64), np.asarray(curve[1], dtype=float)
        else:
            values = np.asarray(curve, dtype=float)
            steps = np.arange(values.size, dtype=np.int64)
        builder.add_columns(key, steps, values)
    return builder.build("synthetic.log", fmt)


def findings_of(log: TrainingLog, overrides: Mapping[str, Mapping[str, object]] | None = None,
                rule: str | None = None) -> list:
    policy = apply_overrides(MonitorPolicy(), {k: dict(v) for k, v in (overrides or {}).items()})
    found, _ = evaluate(log, policy)
    return [f for f in found if rule is None or f.rule == rule]


def val_points(values: Sequence[float], every: int = 20) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(0, every * len(values), every), np.asarray(values, dtype=float)


def write_verl_jsonl(path: Path, rows: Sequence[Mapping[str, float]], start: int = 1) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i, row in enumerate(rows, start=start):
            handle.write(json.dumps({"step": i, "data": dict(row)}) + "\n")
    return path


def healthy_rows(n: int = 100, seed: int = 0) -> list[dict[str, float]]:
    """verl-style rows of a run that learns normally."""
    rng = np.random.default_rng(seed)
    reward = np.clip(np.linspace(0.2, 0.7, n) + rng.normal(0, 0.02, n), 0, 1)
    return [{"critic/score/mean": float(reward[i]), "actor/entropy": float(0.5 - 0.002 * i + rng.normal(0, 0.01)),
             "actor/ppo_kl": 0.001, "actor/pg_clipfrac": 0.003, "critic/kl": float(0.001 * i / 10),
             "response_length/mean": float(300 + rng.normal(0, 5)), "response_length/clip_ratio": 0.01,
             "actor/grad_norm": float(2 + rng.normal(0, 0.1)), "timing_s/step": 20.0} for i in range(n)]
