"""Shrink the demo report screenshots for the repository: full pages scaled to half width, all palette PNGs.

    python docs/examples/shrink_screenshots.py SHOTS_DIR docs/examples
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

MAX_FULL_WIDTH = 700


def shrink(source: Path, target: Path) -> None:
    image = Image.open(source).convert("RGB")
    if source.stem.endswith("_full") and image.width > MAX_FULL_WIDTH:
        image = image.resize((MAX_FULL_WIDTH, round(image.height * MAX_FULL_WIDTH / image.width)), Image.LANCZOS)
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def main(argv: list[str]) -> None:
    shots, out = Path(argv[0]), Path(argv[1])
    for source in sorted(shots.glob("demo_*.png")):
        shrink(source, out / source.name)
        print(f"{out / source.name}: {(out / source.name).stat().st_size // 1024} KB")


if __name__ == "__main__":
    main(sys.argv[1:])
