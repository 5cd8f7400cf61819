"""What the monitor says about a log beside its rules: an unreadable log kept as one problem, run metadata
that names another model, and unknown keys that look like canonical metrics ("these keys look like ...").

A log of another model's run judged for this checkpoint is a silent wrong answer, so the model a log's
run metadata names (tinker-cookbook `config.json` `model_name`, a checkpoint folder's `config.json`
`_name_or_path`, W&B `wandb-metadata.json` `--model`/`--pretrain` arguments, verl's `model.path`) is
compared with the gated checkpoint's identity and a mismatch is warned. A guessed mapping is never
applied (a key's meaning is the trainer's); it is suggested, with the `--map` that would apply it.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.monitor.series import ReadProblem, TrainingLog

#: Metadata files beside (or above) a log, and how each names the trained model.
_JSON_MODEL_KEYS = ("model_name", "_name_or_path", "base_model_name_or_path", "model_name_or_path", "model")
_ARG_FLAGS = ("--model", "--pretrain", "--model_name_or_path", "--model_name", "--model-name")
_VERL_MODEL = re.compile(r"actor_rollout_ref\.model\.path[=:]\s*['\"]?([^\s'\",}]+)")
_HEAD_BYTES = 1 << 20

#: (pattern over a key's last path parts, canonical metric) for "these keys look like ..." suggestions.
_LOOKS_LIKE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|/)(test|eval|val|valid|validation|heldout)(/|_).*(acc|accuracy|pass@1|score|correct|"
                r"reward)"), "val_score/<dataset>"),
    (re.compile(r"(^|/)(reward|rewards|score|scores|return)(/(mean|avg|total|pass@1|all))?$"), "reward_mean"),
    (re.compile(r"(reward|score)s?[/_](std|stdev)$"), "reward_std"),
    (re.compile(r"(^|/)(grad_norm|gradient_norm|grad-norm)$"), "grad_norm"),
    (re.compile(r"(^|/)(learning_rate|lr)$"), "lr"),
    (re.compile(r"(^|/)(entropy|policy_entropy|entropy_mean)$"), "entropy"),
    (re.compile(r"(^|/)(kl|kl_div|kl_divergence|kl_ref|kl_loss)$"), "kl_ref"),
    (re.compile(r"(response|completion|output|ac)_?(tokens|length|len)(/mean|_mean|_per_turn)?$"), "len_mean"),
    (re.compile(r"(^|/)(pg_clipfrac|clipfrac|clip_frac|clip_fraction)$"), "clipfrac"),
)
#: Keys that are never a suggestion: preference-optimisation rewards, losses, bookkeeping.
_NOT_SUGGESTED = re.compile(r"chosen|rejected|margin|loss|runtime|per_second|_timestamp|_step$")


def unreadable_log(path: str | Path, fmt: str, error: InputError) -> TrainingLog:
    """A log that could not be read at all, as a log with that one problem (the gate is then `error`)."""
    problem = ReadProblem(str(error.file or path), error.message, line=error.line, column=error.column,
                          fix=error.fix)
    return TrainingLog(str(path), fmt, {}, {}, [problem])


def with_notes(log: TrainingLog, checkpoint: str | None = None) -> TrainingLog:
    """`log` with warnings for metadata naming another model and suggestions for keys that look canonical."""
    notes: list[str] = []
    if checkpoint:
        named = run_model(Path(log.path))
        if named is not None and not any(same_model(named[0], ident) for ident in identities(checkpoint)) \
                and not _same_run(Path(log.path), checkpoint):
            notes.append(f"the run metadata ({named[1]}) names model '{named[0]}', but the gated checkpoint is "
                         f"'{checkpoint}': is this log another model's run? point monitor.logs at this checkpoint's "
                         "training run")
    suggested = suggest_mapping(log)
    if suggested:
        shown = ", ".join(f"{key} -> {name}" for name, key in suggested.items())
        maps = " ".join(f"--map {name}={key}" for name, key in suggested.items() if "<" not in name)
        notes.append(f"these keys look like canonical metrics the monitor could judge: {shown}; if they mean that, "
                     "map them (monitor.metrics in the contract" + (f", or {maps}" if maps else "") + ")")
    return replace(log, warnings=[*log.warnings, *notes]) if notes else log


def suggest_mapping(log: TrainingLog) -> dict[str, str]:
    """canonical -> unknown key that looks like it, for canonical metrics the log lacks (first match wins)."""
    out: dict[str, str] = {}
    for key in log.unknown_keys:
        lowered = key.lower()
        if _NOT_SUGGESTED.search(lowered):
            continue
        for pattern, name in _LOOKS_LIKE:
            taken = name in out or (name in log.metrics) or (name.startswith("val_score") and log.val_scores())
            if not taken and pattern.search(lowered):
                out[name] = key
                break
    return out


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def same_model(named: str, checkpoint: str) -> bool:
    """Whether a log's model name and the checkpoint's identity plausibly name one model: the name's last
    path part appears in the identity or the identity's in the name (a fine-tuned checkpoint of a base model
    is usually named after it; anything else is worth a look)."""
    base = _norm(named.rstrip("/").rsplit("/", 1)[-1])
    ident = _norm(checkpoint)
    tail = _norm(checkpoint.rstrip("/").rsplit("/", 1)[-1].split(",")[0])
    return bool(base) and (base in ident or (bool(tail) and tail in _norm(named)))


def _paths(checkpoint: str) -> list[Path]:
    """Local folders the checkpoint identity names (`pretrained=...` model arguments, or the identity itself)."""
    parts = [part.split("=", 1)[-1] for part in checkpoint.split(",")]
    return [Path(part) for part in parts if part and ("/" in part or "\\" in part) and Path(part).is_dir()]


def identities(checkpoint: str) -> list[str]:
    """The checkpoint's identity, and the base model a local checkpoint's own config.json names (a trained
    checkpoint keeps the name of the model it was trained from)."""
    out = [checkpoint]
    for folder in _paths(checkpoint):
        found = _json_model(folder / "config.json") or _json_model(folder / "adapter_config.json")
        if found:
            out.append(found)
    return out


def _same_run(log_path: Path, checkpoint: str) -> bool:
    """A checkpoint saved inside the log's run folder is that run's, whatever the metadata calls the model."""
    run = (log_path if log_path.is_dir() else log_path.parent).resolve()
    return any(run == folder.resolve() or run in folder.resolve().parents for folder in _paths(checkpoint))


def run_model(log_path: Path) -> tuple[str, str] | None:
    """(model name, where it was found) from the run metadata beside a log, or None."""
    folder = log_path if log_path.is_dir() else log_path.parent
    for candidate in (folder / "config.json", folder / "adapter_config.json", folder.parent / "config.json"):
        found = _json_model(candidate)
        if found is not None:
            return found, str(candidate)
    for meta in (folder / "files" / "wandb-metadata.json", folder / "wandb-metadata.json"):
        found = _args_model(meta)
        if found is not None:
            return found, str(meta)
    if log_path.is_file() and log_path.suffix not in (".json", ".jsonl", ".csv", ".tsv"):
        try:
            with log_path.open("rb") as handle:
                head = handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None
        match = _VERL_MODEL.search(head)
        if match and "$" not in match.group(1):  # an unexpanded shell variable names nothing
            return match.group(1), f"{log_path} (actor_rollout_ref.model.path)"
    return None


def _load(path: Path) -> object:
    if not path.is_file() or path.stat().st_size > _HEAD_BYTES:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None


def _json_model(path: Path) -> str | None:
    data = _load(path)
    if not isinstance(data, dict):
        return None
    return next((data[k] for k in _JSON_MODEL_KEYS if isinstance(data.get(k), str) and data[k]
                 and "$" not in data[k]), None)


def _args_model(path: Path) -> str | None:
    data = _load(path)
    args = data.get("args") if isinstance(data, dict) else None
    if not isinstance(args, list):
        return None
    for i, arg in enumerate(args[:-1]):
        if arg in _ARG_FLAGS and isinstance(args[i + 1], str):
            return str(args[i + 1])
    return None
