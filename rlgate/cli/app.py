"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

import sys
from importlib import import_module

from rlgate._core.gcpause import executable
from rlgate.cli.common import app

#: Command modules in the order `rlgate --help` lists them: the release gate first, then the
#: tools around it, then the contract commands (validate, schema, init).
COMMAND_MODULES = (
    "check_cmd",
    "demo_cmd",
    "eval_cmd",
    "merge_cmd",
    "import_cmd",
    "gate_cmd",
    "report_cmd",
    "monitor_cmd",
    "watch_cmd",
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


def _printable_output() -> None:
    """Where stdout/stderr refuse lone surrogates (PYTHONIOENCODING=utf-8, a UTF-8 locale other than C), a path of
    non-UTF-8 bytes, which Python holds as such, is printed as `\\udcXX` instead of ending the command in a
    traceback after its work is done."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main() -> None:
    """The `rlgate` executable: its commands may use the collector policy of a process that ends with them."""
    _printable_output()
    with executable():
        app()


if __name__ == "__main__":
    main()
