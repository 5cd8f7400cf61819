"""Failure classifiers of VLM answers: ChartQA, MathVista (testmini) and MMMU.

ChartQA (answers read with lm-eval's own final-answer parser, right = lm-eval's relaxed accuracy):
- `chart_no_parseable_answer`: no `Final Answer:` the scorer can read (format);
- `chart_value_right_format_wrong`: the number is right but a unit, symbol or wording makes the
  exact match fail (exact and relaxed disagree), or the relaxed scorer cannot read it (format);
- `chart_header_binding`: the answer is another row's or series' value or name (the table of
  generated charts, or the chart's categories named in the question);
- `chart_numeric_misread`: a number off by more than ChartQA's 5 % tolerance (axis or value misread);
- `chart_wrong_answer`: any other wrong text answer.
MathVista: `mathvista_no_parseable_answer`, `mathvista_numeric_off`, `mathvista_wrong_choice`,
`mathvista_wrong_answer`, each placed in the failing item's skills (metadata.skills).
MMMU: `mmmu_no_parseable_choice` (none of MMMU's parsing rules matched), `mmmu_wrong_choice`,
placed in the subject.
"""

from __future__ import annotations

import re
from typing import Any

from rlgate.badcases.models import FailureKind
from rlgate.badcases.taxonomy import (
    ClassifyOptions,
    Failure,
    FailureClassifier,
    SampleOutcome,
    binary_score,
    first_response,
)
from rlgate.harness.vocabulary import answer_parse
from rlgate.results.models import INVALID_ANSWER, SampleRecord

TOLERANCE = 0.05  # ChartQA's relaxed accuracy
_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _number(text: str) -> float | None:
    found = _NUM.findall(text or "")
    if len(found) != 1:
        return None
    try:
        return float(found[0].replace(",", ""))
    except ValueError:
        return None


def _gold(sample: SampleRecord) -> str:
    label = (sample.doc or {}).get("label")
    if isinstance(label, list) and label:
        return str(label[0])
    return str(sample.target or "")


def _table_cells(doc: dict[str, Any]) -> tuple[set[float], set[str]]:
    """Values and row/series names of a generated chart's table (empty for charts without one)."""
    table = doc.get("table")
    values: set[float] = set()
    names: set[str] = set()
    if isinstance(table, dict):
        for series, row in table.items():
            names.add(str(series).lower())
            if isinstance(row, dict):
                for category, value in row.items():
                    names.add(str(category).lower())
                    if isinstance(value, (int, float)):
                        values.add(float(value))
    return values, names


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(b), 1e-10)


class ChartQaClassifier:
    family = "chartqa"

    def claims(self, task: str) -> bool:
        return task.startswith("chartqa")

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        response = first_response(sample)
        found = answer_parse(task, response, sample.doc or {})
        answer = found.answer if found is not None else None
        relaxed = binary_score(sample.score("relaxed_accuracy", "none"))
        exact = binary_score(sample.score("exact_match", "none"))
        gold = _gold(sample)
        failures: tuple[Failure, ...] = ()
        if not answer:
            failures = (Failure("chart_no_parseable_answer", "format"),)
        elif not relaxed or exact is False:  # wrong, or right only under the 5 % / format relaxation
            failures = (self._wrong(answer, gold, sample, bool(relaxed)),)
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=bool(relaxed), parsed=bool(answer), failures=failures, answer=answer or None,
                             response_chars=len(response))

    @staticmethod
    def _wrong(answer: str, gold: str, sample: SampleRecord, relaxed: bool) -> Failure:
        pred_n, gold_n = _number(answer), _number(gold)
        if relaxed or (pred_n is not None and gold_n is not None and _close(pred_n, gold_n)):
            return Failure("chart_value_right_format_wrong", "format")
        values, names = _table_cells(sample.doc or {})
        if pred_n is not None and gold_n is not None:
            others = {v for v in values if not _close(v, gold_n)}
            if any(_close(pred_n, v) for v in others):
                return Failure("chart_header_binding", "knowledge")
            return Failure("chart_numeric_misread", "knowledge")
        text = answer.strip().rstrip(".").lower()
        question = str((sample.doc or {}).get("query", "")).lower()
        if text and text != gold.lower() and (text in names or (len(text) > 2 and text in question)):
            return Failure("chart_header_binding", "knowledge")
        return Failure("chart_wrong_answer", "knowledge")


def _skills(sample: SampleRecord) -> list[str]:
    meta = (sample.doc or {}).get("metadata")
    skills = meta.get("skills") if isinstance(meta, dict) else None
    return [str(s) for s in skills] if isinstance(skills, list) and skills else []


class MathVistaClassifier:
    family = "mathvista"

    def claims(self, task: str) -> bool:
        return task.startswith("mathvista")

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        filt = "rule" if "rule" in sample.scores else options.filter_for(task, self.family, sample)
        right = binary_score(sample.score("acc", filt))
        answer = sample.filtered.get(filt)
        parsed = answer is not None and answer != INVALID_ANSWER
        doc = sample.doc or {}
        skills = _skills(sample)
        failures: list[Failure] = []
        if not right:
            if not parsed:
                cls = "mathvista_no_parseable_answer"
            elif doc.get("question_type") == "multi_choice":
                cls = "mathvista_wrong_choice"
            elif doc.get("answer_type") in ("integer", "float"):
                cls = "mathvista_numeric_off"
            else:
                cls = "mathvista_wrong_answer"
            kind: FailureKind = "format" if not parsed else "knowledge"
            failures.append(Failure(cls, kind, skills[0] if parsed and skills else None))
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=bool(right), parsed=parsed, failures=tuple(failures),
                             categories=tuple(skills), answer=answer, response_chars=len(first_response(sample)))


class MmmuClassifier:
    family = "mmmu"

    def claims(self, task: str) -> bool:
        return task.startswith("mmmu_val")

    def classify(self, task: str, sample: SampleRecord, options: ClassifyOptions) -> SampleOutcome:
        right = binary_score(sample.score("acc", "none"))
        response = first_response(sample)
        found = answer_parse(task, response, sample.doc or {})
        parsed = found is not None and found.parsed
        subject = task.removeprefix("mmmu_val_").replace("_", " ") or None
        failures: tuple[Failure, ...] = ()
        if not right:
            failures = ((Failure("mmmu_no_parseable_choice", "format"),) if not parsed
                        else (Failure("mmmu_wrong_choice", "knowledge", subject),))
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=bool(right), parsed=parsed, failures=failures,
                             categories=(subject,) if subject else (), answer=None, response_chars=len(response))


VLM_CLASSIFIERS: list[FailureClassifier] = [ChartQaClassifier(), MathVistaClassifier(), MmmuClassifier()]
