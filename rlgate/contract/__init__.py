"""The contract language: models, loading with located errors, JSON Schema."""

from rlgate.contract.loader import ResolvedContract, ResolvedTask, load_contract
from rlgate.contract.models import (
    Contract,
    GateConfig,
    GatePolicy,
    Protocol,
    Sampling,
    Suite,
    TaskEntry,
)

__all__ = [
    "Contract",
    "GateConfig",
    "GatePolicy",
    "Protocol",
    "ResolvedContract",
    "ResolvedTask",
    "Sampling",
    "Suite",
    "TaskEntry",
    "load_contract",
]
