"""User key mapping: tell the monitor which log key holds which canonical metric.

A trainer that logs a proxy reward as `reward/g` and the true reward as `reward/f` is invisible to
the alias table; `monitor.metrics: {reward_mean: reward/g, val_score/true: reward/f}` in the contract
(or `--map reward_mean=reward/g` on `rlgate monitor`) fixes that. A mapping always wins over the
alias table; the series it displaces stays in the log as an extra key. Mistakes are errors, never
silently ignored: an unknown canonical name gets a did-you-mean, a key the log lacks gets the list
of keys the log does have.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.monitor.series import Series, TrainingLog
from rlgate.monitor.vocabulary import ALIASES, VAL_PREFIX, classify

#: What a mapping may name: every canonical metric, and `val_score/<dataset>` for held-out scores.
CANONICAL_NAMES = (*ALIASES, VAL_PREFIX + "<dataset>")


def check_canonical(name: str, *, field: str, origin: str | Path | None = None) -> None:
    """Raise with a did-you-mean when `name` is not a canonical metric."""
    if name in ALIASES or (name.startswith(VAL_PREFIX) and len(name) > len(VAL_PREFIX)):
        return
    close = difflib.get_close_matches(name, [*ALIASES, VAL_PREFIX + "heldout"], n=1, cutoff=0.5)
    hint = (f"did you mean '{close[0]}'?" if close and not close[0].startswith(VAL_PREFIX)
            else "did you mean 'val_score/<dataset>' (a held-out score)?" if close else "")
    raise InputError(f"unknown canonical metric '{name}'", file=origin, field=field,
                     fix=(hint + " " if hint else "") + f"canonical names: {', '.join(CANONICAL_NAMES)}")


def parse_map_options(options: Sequence[str]) -> dict[str, str]:
    """`--map canonical=key` options as a dict; each checked as it is parsed."""
    out: dict[str, str] = {}
    for option in options:
        name, sep, key = option.partition("=")
        name, key = name.strip(), key.strip()
        if not sep or not name or not key:
            raise InputError(f"--map '{option}' is not canonical=key", field="--map",
                             fix="e.g. --map reward_mean=reward/g --map val_score/true=reward/f")
        check_canonical(name, field=f"--map {name}")
        out[name] = key
    return out


def check_mapping(mapping: Mapping[str, str], *, field_prefix: str = "monitor.metrics",
                  origin: str | Path | None = None) -> None:
    """Every canonical name of a mapping exists, and no log key is claimed twice."""
    seen: dict[str, str] = {}
    for name, key in mapping.items():
        field = f"{field_prefix} {name}" if field_prefix.startswith("--") else f"{field_prefix}.{name}"
        check_canonical(name, field=field, origin=origin)
        if key in seen:
            raise InputError(f"log key '{key}' is mapped to both '{seen[key]}' and '{name}'", file=origin,
                             field=field, fix="map each log key to one canonical metric")
        seen[key] = name


def _raw(series: Series) -> Series:
    """The series as logged (alias scaling such as verl's `actor/lr(1e-4)` undone)."""
    match = classify(series.source_key)
    if match is None or match.scale == 1.0:
        return series
    return Series(series.source_key, series.source_key, series.steps, series.values / match.scale)


def apply_mapping(log: TrainingLog, mapping: Mapping[str, str], *, source: str = "monitor.metrics") -> TrainingLog:
    """`log` with each mapped key read as its canonical metric; a key the log lacks is an error."""
    if not mapping:
        return log
    metrics, extra = dict(log.metrics), dict(log.extra)
    for name, key in mapping.items():
        series = _take(metrics, extra, key)
        if series is None:
            have = sorted({*(s.source_key for s in metrics.values()), *extra})
            close = difflib.get_close_matches(key, have, n=1, cutoff=0.6)
            shown = ", ".join(have[:40]) + (f", ... ({len(have)} in all)" if len(have) > 40 else "")
            raise InputError(
                f"mapped key '{key}' (for {name}) is not in this log", file=log.path,
                field=f"{source} {name}" if source.startswith("--") else f"{source}.{name}",
                fix=(f"did you mean '{close[0]}'? " if close else "") + f"keys in this log: {shown or 'none'}")
        displaced = metrics.pop(name, None)
        if displaced is not None:
            extra[displaced.source_key] = _raw(displaced)
        metrics[name] = Series(name, key, series.steps, series.values)
    return replace(log, metrics=metrics, extra=extra)


def _take(metrics: dict[str, Series], extra: dict[str, Series], key: str) -> Series | None:
    """Remove and return the series read from log key `key`, wherever it landed."""
    for name, series in metrics.items():
        if series.source_key == key:
            return _raw(metrics.pop(name))
    return extra.pop(key, None)
