"""One exception type for every bad input, so the CLI can print one clear line and exit 2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlgate._core.text import visible_controls


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


DISTRIBUTION = "rl-release-gate"  # rlgate's name on PyPI ("rlgate" there is an unrelated project)


def install_hint(extra: str) -> str:
    """The install line for an extra: from PyPI, and from a checkout (pinned to the lock)."""
    return f"pip install '{DISTRIBUTION}[{extra}]', or in a checkout: pip install -c constraints.txt -e '.[{extra}]'"


def supported_range(distribution: str) -> str | None:
    """The version range of `distribution` that rlgate's own metadata requires (any extra), e.g. '>=4.45,<5.18'."""
    import re
    from importlib import metadata

    wanted = re.sub(r"[-_.]+", "-", distribution).lower()
    for name in (DISTRIBUTION, "rlgate"):
        try:
            requires = metadata.requires(name) or []
            if name == "rlgate" and not (metadata.metadata(name)["Summary"] or "").startswith("Release gate for RL"):
                continue  # PyPI's unrelated "rlgate"
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)", line)
            if found and re.sub(r"[-_.]+", "-", found.group(1)).lower() == wanted and found.group(3).strip():
                return "".join(found.group(3).split())
    return None


def _broken_install(module: str, error: ImportError) -> tuple[str, str, str | None] | None:
    """(what is wrong, distribution, supported range) when `module` is installed but importing it (or a name from
    it) failed; None when it is not installed at all (then the extra is simply missing)."""
    import importlib.util
    from importlib import metadata

    root = module.split(".")[0]
    if isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] == root:
        return None  # the package itself is absent
    try:
        if importlib.util.find_spec(root) is None:
            return None
    except (ImportError, ValueError):
        return None
    distributions = metadata.packages_distributions().get(root, [root])
    dist = distributions[0]
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        version = "unknown version"
    missing = f"'{error.name}'" if isinstance(error, ModuleNotFoundError) and error.name else None
    detail = f"the module {missing} is missing" if missing else str(error).split("\n")[0][:300]
    supported = supported_range(dist)
    text = f"{dist} {version} is installed but does not work with rlgate ({type(error).__name__}: {detail})"
    return text + (f"; rlgate supports {dist}{supported}" if supported else ""), dist, supported


class MissingExtraError(InputError):
    """An optional backend was asked for but its extra is not installed (or is installed and broken)."""

    @classmethod
    def for_extra(cls, what: str, extra: str, module: str, error: ImportError | None = None) -> MissingExtraError:
        """The error for a failed import of `module`; `error` defaults to the ImportError being handled, so an
        installed package whose import fails (a release without a name rlgate uses) is reported as such, never
        as 'not installed'."""
        import sys

        if error is None:
            active = sys.exc_info()[1]
            error = active if isinstance(active, ImportError) else None
        broken = _broken_install(module, error) if error is not None else None
        if broken is not None:
            text, dist, supported = broken
            pin = f"pip install '{dist}{supported}'" if supported else install_hint(extra)
            return cls(message=f"{what} needs the Python package '{module}': {text}",
                       fix=f"{pin}; or rlgate's locked versions: {install_hint(extra)}")
        return cls(
            message=f"{what} needs the Python package '{module}', which is not installed",
            fix=install_hint(extra),
        )
