"""The contract's sections for the layers beside the gates: the training monitor's logs, `rlgate watch`, and the
contamination check's training data (moved out of models.py, which re-exports them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from rlgate.contract.base import StrictModel


# --------------------------------------------------------------------------- monitor
class MonitorSpec(StrictModel):
    """Training logs to read and how to judge them."""

    logs: list[str] = Field(default_factory=list, description="log files (paths relative to the contract)")
    format: str = Field(
        "auto", description="auto | trl | verl_jsonl | verl_console | tensorboard | openrlhf | wandb | wandb_csv | "
        "mlflow | csv | jsonl"
    )
    metrics: dict[str, str] = Field(
        default_factory=dict,
        description="canonical metric -> the log's key, for keys the monitor does not know "
        "(e.g. reward_mean: reward/g, val_score/true: reward/f); wins over the built-in aliases",
    )
    duplicate_steps: Literal["refuse", "last", "first"] = Field(
        "refuse", description="a step logged twice with different values (a resumed or restarted run): refuse (the "
        "monitor gate is error), or keep the last or the first logging")
    policy: str | None = Field(None, description="monitor threshold file; default gates/monitor_default.yaml")
    overrides: dict[str, dict[str, Any]] = Field(default_factory=dict, description="rule -> threshold overrides")
    history: str | None = Field(None, description=(
        "history store: a file, sqlite:///path or postgresql:// URL; default $RLGATE_HISTORY, else "
        ".rlgate/history.sqlite"))
    training_run: str | None = None


# --------------------------------------------------------------------------- watch
class WatchSpec(StrictModel):
    """`rlgate watch`: how a training run's checkpoints are gated while it trains."""

    private_every: int | None = Field(
        None, ge=1, description="consult the release_gate_only splits at every N-th gated checkpoint (within each "
        "split's consult_budget); unset: never during training, only the iteration-visible splits are gated")
    webhook_url: str | None = Field(
        None, description="POST a Slack-compatible JSON message here when the control signal changes "
        "(pause or rollback); unset: no message")
    stable_seconds: float = Field(
        30.0, gt=0.0, description="a checkpoint folder without its trainer's completion marker counts as complete "
        "once its files keep their sizes for this long")

    @field_validator("webhook_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("webhook_url must be an http:// or https:// URL")
        return value



# --------------------------------------------------------------------------- contamination
class ContaminationSpec(StrictModel):
    """Training data to check the eval documents against; `max_rate` makes it a hard gate."""

    train_files: list[str] = Field(default_factory=list, description="training JSONL/text files (relative paths)")
    ngram: int = Field(13, ge=3, le=64, description="n-gram length in normalised tokens (13 as in GPT-3 / lm-eval)")
    max_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="block when a task's share of contaminated documents exceeds this"
    )
    text_field: str | None = Field(None, description="JSON field holding the training text (default: all strings)")
    min_overlap: float = Field(
        0.0, ge=0.0, le=1.0, description="share of a document's n-grams that must occur in training (0: any)"
    )
