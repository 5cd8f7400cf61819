"""Running the demos one after another in one folder, as a new user does: `rlgate demo`, `--agent`, `--vlm`,
then `--real`. Each writes to its own default folder, none touches another's outputs, and each printed re-run
line still gives its own demo's decision (the text and VLM demos at toy size: the plumbing, not the gains)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
pytest.importorskip("torch")
pytest.importorskip("inspect_ai")

RERUN = re.compile(r"re-run the gate yourself[^:]*: (rlgate check .*?)\s+\(exit code (\d)\)")


def _rerun_line(output: str) -> tuple[list[str], int]:
    found = RERUN.search(output)
    assert found, output
    return shlex.split(found.group(1))[1:], int(found.group(2))


def _snapshot(folder: Path) -> dict[str, int]:
    """Every file under `folder` (outside the caches) with its size: what a later demo must leave as it is."""
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*"))
            if p.is_file() and "cache" not in p.parts and not p.parts[-2].startswith("report-rerun")}


@pytest.mark.slow
def test_four_demos_in_one_folder_keep_each_others_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlgate.demo import run as text_run
    from rlgate.demo import vlm as vlm_run
    from rlgate.demo.build import DemoSettings
    from rlgate.demo.vlm import VlmDemoSettings

    toy = DemoSettings(gsm8k_test=12, gsm8k_train=120, mmlu_per_category=1, ifeval_test=10, base_steps=6,
                       candidate_steps=6, batch_size=8)
    monkeypatch.setattr(text_run, "DemoSettings", lambda: toy)
    monkeypatch.setattr(vlm_run, "VlmDemoSettings", lambda: VlmDemoSettings(test_charts=6, mathvista=4,
                                                                           train_charts=6, base_steps=4,
                                                                           candidate_steps=2))
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    reruns: dict[str, tuple[list[str], int]] = {}
    snapshots: dict[str, dict[str, int]] = {}
    for flag, folder in (("", "rlgate-demo"), ("--agent", "rlgate-demo-agent"), ("--vlm", "rlgate-demo-vlm")):
        result = runner.invoke(app, ["demo", *([flag] if flag else [])])
        assert result.exit_code in (0, 1, 3), result.output
        assert (tmp_path / folder / "contract.yaml").exists(), result.output
        reruns[folder] = _rerun_line(result.output)
        first = (tmp_path / folder / "contract.yaml").read_text(encoding="utf-8").splitlines()[0]
        if "$schema=" in first:  # the schema an editor follows is the copy beside the contract, not a URL
            assert (tmp_path / folder / first.split("$schema=", 1)[1]).is_file(), first
        snapshots[folder] = _snapshot(tmp_path / folder)
        for earlier, files in snapshots.items():  # nothing an earlier demo wrote changed
            assert _snapshot(tmp_path / earlier) == files, (flag, earlier)

    # the real demo fails here (no such model) after claiming its own folder: nothing else is touched
    result = runner.invoke(app, ["demo", "--real", "--model", str(tmp_path / "no-such-model")])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    for folder, files in snapshots.items():
        assert _snapshot(tmp_path / folder) == files, folder

    # another demo pointed at a demo's folder is refused, naming the fix
    refused = runner.invoke(app, ["demo", "--agent", "--out", "rlgate-demo"])
    assert refused.exit_code == 2 and "holds the outputs of `rlgate demo`" in refused.output
    assert "--force" in refused.output and _snapshot(tmp_path / "rlgate-demo") == snapshots["rlgate-demo"]

    for folder, (args, code) in reruns.items():  # each printed line gates its own demo, from the cache
        again = runner.invoke(app, args)
        assert again.exit_code == code, (folder, args, again.output)
        assert Path(args[1]).resolve().is_relative_to(tmp_path / folder), args
