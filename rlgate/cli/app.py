"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

from rlgate.cli import contract_cmds  # noqa: F401  (registers validate, schema, init)
from rlgate.cli.common import app


def main() -> None:
    app()


if __name__ == "__main__":
    main()
