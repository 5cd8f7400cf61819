"""Running untrusted model code (code-RL suites): a subprocess with no network, its own file system view,
resource limits and a scrubbed environment. What it isolates and what it does not: docs/sandbox.md.

Harness-neutral: `run_program` takes a program text and returns a typed `Outcome`; the lm-eval adapter
puts it behind lm-eval's code metrics (`rlgate.harness.lmeval.code_tasks`).
"""

from __future__ import annotations

from rlgate.sandbox.process import (
    Limits,
    Outcome,
    SandboxUnavailable,
    available,
    library_paths,
    run_program,
    run_programs,
)

__all__ = ["Limits", "Outcome", "SandboxUnavailable", "available", "library_paths", "run_program", "run_programs"]
