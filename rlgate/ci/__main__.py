"""`python -m rlgate.ci check|report|finish`: the composite action's run steps (inputs come from env)."""

from __future__ import annotations

import os
import sys

from rlgate.ci.steps import STEPS


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in STEPS:
        print(f"usage: python -m rlgate.ci {{{'|'.join(STEPS)}}}", file=sys.stderr)
        return 2
    return STEPS[args[0]](dict(os.environ), sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
