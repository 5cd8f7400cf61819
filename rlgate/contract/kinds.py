"""Which kind of rlgate file a YAML mapping is, told by its top-level keys.

Contracts, suites, gate policies and monitor policies share `schema_version` and `name`, so a file
named in the wrong place (a contract under `gates.use:`, a policy under `suites:`) failed with
"unknown key 'baseline'" about the file it points at. Naming the kind says what went wrong.
"""

from __future__ import annotations

from typing import Any

from rlgate.contract.gatekinds import GATE_KINDS
from rlgate.contract.yamlpos import PathKey, YamlDoc, dotted

#: keys only each kind has at its top level, checked in this order (a contract also has `gates`)
_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("contract", ("baseline", "protocol", "splits", "suites", "gates")),
    ("suite", ("tasks",)),
    ("monitor policy", ("window", "rules", "history")),
    ("gate policy", ("alpha", "power", "bootstrap_resamples", "allow_corrupt", "min_coverage", "allow_unpaired",
                     "allow_missing_trajectories", *(spec.field for spec in GATE_KINDS), "decision")),
)
#: where a contract names each kind of file
_NAMED_UNDER = {"suite": "suites:", "gate policy": "gates.use:", "monitor policy": "monitor.policy:"}


def file_kind(data: Any) -> tuple[str, list[str]] | None:
    """(kind, the keys that tell it) for a mapping that is recognisably one kind of file, else None."""
    if not isinstance(data, dict):
        return None
    for kind, keys in _KEYS:
        found = [k for k in keys if k in data]
        if found:
            return kind, found
    return None


def _fix(expected: str, kind: str, field: str) -> str:
    if expected == "gate policy":
        share = (f"; to share another contract's gates, move them into such a file and point both contracts' "
                 f"{field} at it") if kind == "contract" else ""
        return (f"{field} takes a gate policy file such as gates/release_default.yaml (schema_version, name and "
                f"gate settings: alpha, decision, primary, regression, ...){share}")
    if expected == "monitor policy":
        return ("monitor.policy takes a monitor threshold file such as gates/monitor_default.yaml (window, rules, "
                "history)" + ("; a gate policy belongs under gates.use" if kind == "gate policy" else ""))
    if expected == "suite":
        return ("list suite files here (schema_version, name, tasks) such as suites/llm_core_regression.yaml, "
                "or write the suite inline")
    return (f"pass the contract that lists it under {_NAMED_UNDER.get(kind, 'suites:')} (a contract has baseline, "
            "splits, suites, gates; `rlgate init` writes one)")


def check_kind(target: YamlDoc, expected: str, referrer: YamlDoc | None = None, loc: PathKey = (),
               relative: str = "") -> None:
    """Raise a located error when `target` is recognisably another kind of file than `expected`.

    When a field names the file (`referrer` at `loc`), the error points at that field: the fix is made there.
    """
    found = file_kind(target.data)
    if found is None or found[0] == expected:
        return
    kind, keys = found
    what = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} (it has {', '.join(keys)})"
    if referrer is None:
        raise target.error((), f"this file is {what}, not a {expected}", _fix(expected, kind, ""))
    raise referrer.error(loc, f"'{relative}' is {what}, not a {expected}", _fix(expected, kind, dotted(loc)))
