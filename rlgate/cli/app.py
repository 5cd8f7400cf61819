"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

from importlib import import_module

from rlgate.cli.common import app
from rlgate.gcpause import executable

#: Command modules in the order `rlgate --help` lists them: the release gate first, then the
#: tools around it, then the contract commands (validate, schema, init).
COMMAND_MODULES = (
    "check_cmd",
    "demo_cmd",
    "eval_cmd",
    "import_cmd",
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


def _full_short_help() -> None:
    """`rlgate --help` lists each command's whole first paragraph (click would cut it at 45 characters)."""
    for info in app.registered_commands:
        doc = (info.callback.__doc__ or "") if info.callback else ""
        first = " ".join(doc.strip().split("\n\n")[0].split())
        if first and not info.short_help:
            info.short_help = first


_full_short_help()


def main() -> None:
    """The `rlgate` executable: its commands may use the collector policy of a process that ends with them."""
    with executable():
        app()


if __name__ == "__main__":
    main()
