"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

from importlib import import_module

from rlgate.cli.common import app

#: Command modules in the order `rlgate --help` lists them: the release gate first, then the
#: tools around it, then the contract commands (validate, schema, init).
COMMAND_MODULES = (
    "check_cmd",
    "demo_cmd",
    "eval_cmd",
    "gate_cmd",
    "report_cmd",
    "monitor_cmd",
    "history_cmd",
    "badcases_cmd",
    "contamination_cmd",
    "contract_cmds",
)
for _module in COMMAND_MODULES:
    import_module(f"rlgate.cli.{_module}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
