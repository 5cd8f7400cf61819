"""Shared CLI plumbing: the typer app, exit codes and the bad-input handler."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer

from rlgate._core.errors import InputError

#: Exit codes, documented in the README and used by every command.
EXIT_RELEASE = 0
EXIT_BLOCK = 1
EXIT_BAD_INPUT = 2
EXIT_RESEARCH_ONLY = 3
DECISION_EXIT = {"release": EXIT_RELEASE, "block": EXIT_BLOCK, "research_only": EXIT_RESEARCH_ONLY}

app = typer.Typer(
    name="rlgate",
    help="Decide whether an RL-post-trained LLM checkpoint may ship.\n\n"
    "Exit codes: 0 release/success, 1 block, 3 research_only, 2 bad input or usage.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])


def _version(value: bool) -> None:
    if value:
        import rlgate

        typer.echo(f"rlgate {rlgate.__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", help="print rlgate's version and exit", callback=_version,
                                 is_eager=True),
) -> None:
    """Decide whether an RL-post-trained LLM checkpoint may ship.

    Exit codes: 0 release/success, 1 block, 3 research_only, 2 bad input or usage.
    """


def fail(error: InputError) -> typer.Exit:
    """Print one clear error (no traceback) and return the exit to raise."""
    print(f"error: {error}", file=sys.stderr)
    return typer.Exit(EXIT_BAD_INPUT)


def handles_input_errors(func: F) -> F:
    """Turn InputError into one message on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InputError as error:
            raise fail(error) from None
        except KeyboardInterrupt:
            print("interrupted: finished work is kept; run the same command again to resume", file=sys.stderr)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def output_folder(path: Path, option: str = "--out") -> Path:
    """Refuse an output folder that is, or lies under, a file before any work is done (and anything recorded)."""
    for folder in (path, *path.parents):
        if folder.is_dir() or not folder.exists():
            continue
        where = "" if folder == path else f" (so {path} cannot be a folder)"
        raise InputError(f"is a file{where}", file=folder, field=option,
                         fix=f"pass a new or existing folder for {option}; the file is left as it is")
    return path


@contextmanager
def pydantic_plugins_off() -> Iterator[None]:
    """No third-party pydantic plugins for rlgate's own models while a command runs (PYDANTIC_DISABLE_PLUGINS).

    pydantic looks for plugins (observability hooks such as logfire's) in every installed distribution's entry
    points when the first model class is built: about 11 ms of a 0.5 s `rlgate gate` in an environment of 220
    packages, for models that are rlgate's internal data. typer turns them off the same way for its own
    adapters. A PYDANTIC_DISABLE_PLUGINS the user set (to '' to keep every plugin) is left as it is, and the
    variable is restored when the command ends (what the command itself starts, such as a judge's models or
    processes, runs without plugins too).
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        yield
        return
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
