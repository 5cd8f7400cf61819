"""One exception type for every bad input, so the CLI can print one clear line and exit 2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlgate.visible import visible_controls


@dataclass
class InputError(Exception):
    """Bad input from the user: a file, a field or an argument, with where and how to fix it.

    The CLI turns this into a single message (no traceback) and exit code 2.
    """

    message: str
    file: str | Path | None = None
    line: int | None = None
    column: int | None = None
    field: str | None = None
    fix: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def location(self) -> str:
        """`file:line:column` with whatever parts are known."""
        parts: list[str] = []
        if self.file is not None:
            parts.append(str(self.file))
            if self.line is not None:
                parts.append(str(self.line))
                if self.column is not None:
                    parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        head = self.location()
        body = f"{self.field}: {self.message}" if self.field else self.message
        text = f"{head}: {body}" if head else body
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return visible_controls(text)  # ids and names quoted from a bad file must not act on the terminal


class MissingExtraError(InputError):
    """An optional backend was asked for but its extra is not installed."""

    @classmethod
    def for_extra(cls, what: str, extra: str, module: str) -> MissingExtraError:
        return cls(
            message=f"{what} needs the Python package '{module}', which is not installed",
            fix=f"pip install 'rlgate[{extra}]'",
        )
