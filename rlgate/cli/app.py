"""Entry point: `rlgate` command. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

import copy
import sys
from importlib import import_module

import typer

from rlgate.cli.common import app
from rlgate.gcpause import executable, exit_now

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


def app_for(args: list[str]) -> typer.Typer:
    """`app` with only the command `args` names, when they start with one; else the whole app.

    typer builds a click command (parameters, help text) for every registered command on each run, about 11 ms
    for all 13, and a run uses one. Usage lines, help and errors of that command read the same either way;
    no command, `--help`, `--version` or a misspelt name get the whole app, so its listing and suggestions
    are unchanged.
    """
    name = args[0] if args else None
    chosen = [info for info in app.registered_commands if info.callback is not None
              and (info.name or typer.main.get_command_name(info.callback.__name__)) == name]
    if len(chosen) != 1:
        return app
    single = copy.copy(app)
    single.registered_commands = chosen
    return single


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
        try:
            app_for(sys.argv[1:])()
        except SystemExit as done:  # typer ends every command this way, its output already written
            exit_now(done.code)
            raise


if __name__ == "__main__":
    main()
