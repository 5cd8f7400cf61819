"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

from rlgate.cli import badcases_cmd  # noqa: F401  (registers badcases)
from rlgate.cli import check_cmd  # noqa: F401  (registers check)
from rlgate.cli import contamination_cmd  # noqa: F401  (registers contamination)
from rlgate.cli import contract_cmds  # noqa: F401  (registers validate, schema, init)
from rlgate.cli import demo_cmd  # noqa: F401  (registers demo)
from rlgate.cli import eval_cmd  # noqa: F401  (registers eval)
from rlgate.cli import gate_cmd  # noqa: F401  (registers gate)
from rlgate.cli import monitor_cmd  # noqa: F401  (registers monitor)
from rlgate.cli import report_cmd  # noqa: F401  (registers report)
from rlgate.cli.common import app


def main() -> None:
    app()


if __name__ == "__main__":
    main()
