"""OpenCompass's own per-sample verdicts behind the harness port: a read-only harness (rlgate never runs it).

A dataset that maps to an lm-eval task (gsm8k, mmlu_pro, ifeval) is better re-scored through that
task (`rlgate import --from opencompass`, then `rlgate eval --responses`); every other dataset is gated
here on the verdicts OpenCompass's evaluator recorded per example (`results/<model>/<abbr>.json`
`details`): a contract task `{task: <abbr>, harness: opencompass}` and `rlgate gate` on the run folder.
The reading is in `results`.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from rlgate.contract.vocabulary import NO_FILTER, MetricInfo, TaskVocabulary
from rlgate.harness.base import Harness
from rlgate.results.models import RunResult

SAMPLES_HINT = ("re-run the OpenCompass evaluation with its per-sample details (the default; not "
                "--dump-eval-details False): results/<model>/<dataset>.json `details`")


class OpenCompassHarness(Harness):
    """Reads an OpenCompass run's results (one model): one task per dataset abbreviation, metric `accuracy`."""

    name = "opencompass"
    samples_hint = SAMPLES_HINT

    def version(self) -> str | None:
        try:
            return metadata.version("opencompass")
        except metadata.PackageNotFoundError:
            return None

    def can_read(self, path: Path) -> bool:
        """A run folder (<timestamp>/ with results/<model>/ and predictions/ or summary/), its results/ or
        results/<model>/ folder, or one results/<model>/<abbr>.json file."""
        if path.is_file():
            return path.suffix == ".json" and path.parent.parent.name == "results" and (
                path.parent.parent.parent / "predictions").is_dir()
        if not path.is_dir():
            return False
        if path.name == "results" or path.parent.name == "results":
            run = path.parent if path.name == "results" else path.parent.parent
            return (run / "predictions").is_dir()
        runs = [path] if (path / "results").is_dir() else [p for p in path.iterdir() if (p / "results").is_dir()]
        return any((run / "predictions").is_dir() and next((run / "results").glob("*/*.json"), None) is not None
                   for run in runs)

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        from rlgate.harness.opencompass.results import read_run

        return read_run(path, self.version(), samples=samples)

    def vocabulary_of(self, name: str) -> TaskVocabulary:
        """`accuracy`: the share of an example's replicas OpenCompass's evaluator judged correct (a fraction)."""
        return TaskVocabulary(harness=self.name, metrics={"accuracy": MetricInfo(
            filters=(NO_FILTER,), higher_is_better=True, kind="fraction")}, closed=True,
            samples_hint=self.samples_hint, samples_option="per-sample details")


__all__ = ["OpenCompassHarness"]
