"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

from rlgate.cli import (
    badcases_cmd,  # noqa: F401  (registers badcases)
    check_cmd,  # noqa: F401  (registers check)
    contamination_cmd,  # noqa: F401  (registers contamination)
    contract_cmds,  # noqa: F401  (registers validate, schema, init)
    demo_cmd,  # noqa: F401  (registers demo)
    eval_cmd,  # noqa: F401  (registers eval)
    gate_cmd,  # noqa: F401  (registers gate)
    monitor_cmd,  # noqa: F401  (registers monitor)
    report_cmd,  # noqa: F401  (registers report)
)
from rlgate.cli.common import app


def main() -> None:
    app()


if __name__ == "__main__":
    main()
