"""The run folder: what is stored, and writing/re-rendering every report format from it.

OUT/
  decision.json      the decision (engine schema, docs/schema/decision.v1.json); authoritative
  report_model.json  the report model: aggregates, shareable samples, rollout card, sections
  report.html        self-contained page        report.md   job summary        junit.xml   gates as tests

`rlgate report OUT` reads decision.json and report_model.json and writes the rest again without
re-running anything. When decision.json is newer than the model (gates re-decided), its gates win.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import TemplateError, TemplateSyntaxError
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate._core.jsonio import load_document
from rlgate._core.text import visible_surrogates
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.models import RELEASE_GATE_ONLY
from rlgate.engine.models import Decision
from rlgate.report.builder import (
    build_report,
    gate_ref,
    gated_first,
    main_metrics,
    radar_axes,
    top_regressions,
)
from rlgate.report.model import ReportModel
from rlgate.report.rollout import scrub_private
from rlgate.results.manifest import RunManifest
from rlgate.results.models import RunResult

FILES = {"decision": "decision.json", "model": "report_model.json", "html": "report.html",
         "markdown": "report.md", "junit": "junit.xml"}


def _write(path: Path, text: str | bytes | list[str]) -> Path:
    """Write through a temporary file so a crash never leaves half a report."""
    try:
        return write_text_atomic(path, text)
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot write {path.name}: {exc.strerror or exc}", file=path,
                      fix="make the run folder writable (or pass another --out); the files already there are kept")


def _user_template_error(exc: Exception, folder: Path) -> InputError | None:
    """A failure raised by a template of the user's --template-dir, located in it; None when it came from elsewhere."""
    if isinstance(exc, UnicodeDecodeError):
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            try:
                file.read_bytes().decode("utf-8")
            except UnicodeDecodeError as bad:
                return InputError(f"template is not UTF-8 text (byte {bad.start})", file=file,
                                  fix="save the template as UTF-8")
            except OSError:
                continue
        return None
    root = os.path.abspath(folder) + os.sep
    where: tuple[str, int] | None = None
    tb = exc.__traceback__
    while tb is not None:  # jinja2 rewrites the traceback: a template's frames carry its file and line
        name = tb.tb_frame.f_code.co_filename
        if os.path.abspath(name).startswith(root):
            where = (name, tb.tb_lineno)
        tb = tb.tb_next
    if where is None:
        return None
    return InputError(f"template error: {type(exc).__name__}: {exc}", file=where[0], line=where[1],
                      fix="fix the expression on this line of the template in --template-dir (or remove the file "
                      "to use the built-in one)")


def write_model(out_dir: str | Path, model: ReportModel, *, template_dir: str | Path | None = None,
                html_url: str | None = None, step_summary: bool = True) -> dict[str, Path]:
    """Store the model and the decision, then render HTML, Markdown and JUnit from the model."""
    from rlgate.report.html import render_html_parts
    from rlgate.report.junit import render_junit
    from rlgate.report.markdown import github_run_url, render_markdown

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    try:  # UTF-8 bytes straight from pydantic: no str copy of a model of hundreds of MB at 10^6 documents
        stored = model.__pydantic_serializer__.to_json(model)
    except PydanticSerializationError:  # an unpaired surrogate some reader let through: shown as \udXXX text
        model = ReportModel.model_validate(visible_surrogates(model.model_dump()))
        stored = model.__pydantic_serializer__.to_json(model)
    written = {"model": _write(out / FILES["model"], stored)}
    del stored  # freed before the page renders
    written["decision"] = _write(out / FILES["decision"], model.decision.model_dump_json(indent=2) + "\n")
    try:
        html = render_html_parts(model, template_dir)  # the sample data written as it is, not copied into the page
        markdown = render_markdown(model, template_dir, html_url=html_url, run_url=github_run_url())
    except TemplateSyntaxError as exc:
        raise InputError(f"template syntax error: {exc.message}", file=exc.filename or exc.name, line=exc.lineno,
                         fix="fix the template in --template-dir (or remove it to use the built-in one)") from None
    except TemplateError as exc:
        raise InputError(f"template error: {exc.message}", file=template_dir,
                         fix="the override must use the variables of the built-in template of the same name") from None
    except Exception as exc:  # a user's template raising as it renders (1/0, a non-UTF-8 file): bad input
        located = _user_template_error(exc, Path(template_dir)) if template_dir is not None else None
        if located is None:
            raise
        raise located from None
    written["html"] = _write(out / FILES["html"], html)
    written["markdown"] = _write(out / FILES["markdown"], markdown)
    written["junit"] = _write(out / FILES["junit"], render_junit(model))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        except OSError as exc:
            raise InputError(f"cannot append report.md: {exc.strerror or exc}", file=summary,
                             field="GITHUB_STEP_SUMMARY", fix="point it at a writable file, or unset it (or pass "
                             "--no-step-summary to `rlgate report`); every report was written") from None
        written["step_summary"] = Path(summary)
    return written


def write_reports(out_dir: str | Path, decision: Decision, *, contract: ResolvedContract | None,
                  baseline: RunResult | None, candidate: RunResult | None,
                  manifests: Mapping[str, RunManifest] | None = None, monitor: Any = None,
                  template_dir: str | Path | None = None, sample_limit: int | None = None,
                  html_url: str | None = None, step_summary: bool = True) -> dict[str, Path]:
    """Build the report model and write every format into `out_dir`; returns format -> path.

    `manifests` maps "baseline"/"candidate" to run manifests (else those the runs carry);
    `monitor` is the training-monitor report when there is one (else decision.extensions["monitor"]).
    """
    model = build_report(decision, contract=contract, baseline=baseline, candidate=candidate,
                         manifests=manifests, monitor=monitor, sample_limit=sample_limit)
    return write_model(out_dir, model, template_dir=template_dir, html_url=html_url, step_summary=step_summary)


def _read_json(path: Path) -> Any:
    return load_document(path, "re-run `rlgate gate` to write it again")


def _validate(model: type[Any], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{first['msg']} ({exc.error_count()} problem(s))", file=path, field=where or None,
                         fix="the file was not written by this version of rlgate; re-run `rlgate gate`") from None


def with_decision(model: ReportModel, decision: Decision) -> ReportModel:
    """The model with a (re-)decided decision: gates, metrics from gates, radar and regressions updated."""
    private = frozenset(n for s in model.tasks if s.visibility == RELEASE_GATE_ONLY
                        for n in (s.task, s.suite_task) if n)
    overrides = {gate_ref(g): g.higher_is_better for g in decision.gates if g.kind != "monitor"}
    metrics = gated_first(decision, {v.ref: v for v in model.metrics})
    scrubbed = decision.model_copy(update={"extensions": scrub_private(dict(decision.extensions), private)})
    radar = radar_axes(metrics, main_metrics(model.tasks), set(overrides))
    return model.model_copy(update={"decision": scrubbed, "metrics": metrics, "radar": radar,
                                    "top_regressions": top_regressions(decision, metrics, model.tasks)})


def load_model(out_dir: str | Path) -> ReportModel:
    """The stored report model of a run folder (or one built from decision.json alone)."""
    out = Path(out_dir)
    if not out.is_dir():
        raise InputError("is a file, not a run folder" if out.exists() else "run folder does not exist", file=out,
                         fix="pass the --out folder of `rlgate gate`/`check`")
    decision_path, model_path = out / FILES["decision"], out / FILES["model"]
    decision = _validate(Decision, _read_json(decision_path), decision_path) if decision_path.exists() else None
    if model_path.exists():
        model: ReportModel = _validate(ReportModel, _read_json(model_path), model_path)
        if decision is not None and decision != model.decision:
            model = with_decision(model, decision)
        return model
    if decision is None:
        raise InputError(f"no {FILES['decision']} or {FILES['model']} in this folder", file=out,
                         fix="run `rlgate gate CONTRACT --out DIR` first; `rlgate report` re-renders its outputs")
    model = build_report(decision)
    return model.model_copy(update={"sample_note": f"no {FILES['model']} in the run folder: gates only"})


def rerender(out_dir: str | Path, *, template_dir: str | Path | None = None, html_url: str | None = None,
             step_summary: bool = True) -> dict[str, Path]:
    """Write every format again from what the run folder stores."""
    return write_model(out_dir, load_model(out_dir), template_dir=template_dir, html_url=html_url,
                       step_summary=step_summary)
