"""Explain a family's accuracy change: answers lost to format and truncation versus lost knowledge.

A drop is called a format problem, not lost knowledge, when the answers the baseline got right
and the candidate lost are mostly unparseable and, on the documents both runs answered in a
parseable form, the candidate is not significantly worse (one-sided exact McNemar).
"""

from __future__ import annotations

from collections import defaultdict

from rlgate.badcases.clusters import Outcomes, mcnemar_greater
from rlgate.badcases.models import DropDriver, DropExplanation
from rlgate.badcases.taxonomy import SampleOutcome


def _loss_kind(outcome: SampleOutcome) -> str:
    kinds = {f.kind for f in outcome.failures}
    if "truncation" in kinds:
        return "truncation"
    if "format" in kinds or not outcome.parsed:
        return "format"
    return "wrong"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _driver(delta: float, lost: dict[str, int], knowledge_p: float | None, alpha: float) -> DropDriver:
    if delta >= 0:
        return "none"
    non_knowledge = lost["format"] + lost["truncation"]
    knowledge_lost = knowledge_p is not None and knowledge_p < alpha
    if not knowledge_lost:
        if non_knowledge == 0:
            return "knowledge" if lost["wrong"] else "none"
        return "truncation" if lost["truncation"] > lost["format"] else "format"
    total = non_knowledge + lost["wrong"]
    return "format_and_knowledge" if total and non_knowledge / total >= 0.25 else "knowledge"


def _text(e: DropExplanation, alpha: float) -> str:
    head = (f"{e.family}: accuracy {_pct(e.baseline_accuracy)} -> {_pct(e.candidate_accuracy)} "
            f"({100 * e.delta:+.1f} pts over {e.n_paired} paired documents)")
    if e.driver == "none":
        return head + "; no drop to explain."
    lost = (f"of the answers the baseline got right, {e.lost_to_format} became unparseable (format), "
            f"{e.lost_to_truncation} were cut at max_tokens and {e.lost_to_wrong_answer} were parsed but wrong; "
            f"{e.gained} were gained")
    parsed = ""
    if e.baseline_accuracy_parsed is not None and e.candidate_accuracy_parsed is not None:
        p = f"p={e.knowledge_p_value:.3g}" if e.knowledge_p_value is not None else "no discordant pairs"
        significant = e.knowledge_p_value is not None and e.knowledge_p_value < alpha
        worse = "significantly worse" if significant else "not significantly worse"
        parsed = (f"; on the {e.n_both_parsed} documents both runs answered in a parseable form, accuracy "
                  f"{_pct(e.baseline_accuracy_parsed)} -> {_pct(e.candidate_accuracy_parsed)} ({worse}, {p})")
    verdict = {
        "format": "the drop is driven by unparseable answers: a format cluster, not lost knowledge",
        "truncation": "the drop is driven by responses cut at max_tokens, not lost knowledge",
        "format_and_knowledge": "the drop is partly format (unparseable answers) and partly lost knowledge",
        "knowledge": "the drop is lost knowledge: parseable answers got worse",
    }[e.driver]
    return f"{head}: {lost}{parsed}; {verdict}."


def explain_drops(candidate: Outcomes, baseline: Outcomes, alpha: float = 0.05,
                  families: set[str] | None = None) -> list[DropExplanation]:
    """One explanation per family with right/wrong answers (not IFEval's per-instruction results)."""
    groups: dict[str, list[tuple[SampleOutcome, SampleOutcome]]] = defaultdict(list)
    per_instruction: set[str] = set()
    for key, cand in candidate.items():
        base = baseline.get(key)
        if base is None or base.doc_hash != cand.doc_hash:
            continue
        if cand.categories and any(f.kind == "instruction" for f in (*cand.failures, *base.failures)):
            per_instruction.add(cand.family)
        groups[cand.family].append((base, cand))
    out: list[DropExplanation] = []
    for family, pairs in sorted(groups.items()):
        if family in per_instruction or family == "ifeval" or (families is not None and family not in families):
            continue
        lost = {"format": 0, "truncation": 0, "wrong": 0}
        gained = 0
        both = [(b, c) for b, c in pairs if b.answered and c.answered]
        for base, cand in pairs:
            if base.correct and not cand.correct:
                lost[_loss_kind(cand)] += 1
            elif cand.correct and not base.correct:
                gained += 1
        n = len(pairs)
        base_acc = sum(b.correct for b, _ in pairs) / n
        cand_acc = sum(c.correct for _, c in pairs) / n
        knowledge_p = None
        if both:
            worse = sum(b.correct and not c.correct for b, c in both)
            better = sum(c.correct and not b.correct for b, c in both)
            knowledge_p = mcnemar_greater(worse, better)
        explanation = DropExplanation(
            family=family, n_paired=n, baseline_accuracy=base_acc, candidate_accuracy=cand_acc,
            delta=cand_acc - base_acc, lost_to_format=lost["format"], lost_to_truncation=lost["truncation"],
            lost_to_wrong_answer=lost["wrong"], gained=gained, n_both_parsed=len(both),
            baseline_accuracy_parsed=sum(b.correct for b, _ in both) / len(both) if both else None,
            candidate_accuracy_parsed=sum(c.correct for _, c in both) / len(both) if both else None,
            knowledge_p_value=knowledge_p, driver=_driver(cand_acc - base_acc, lost, knowledge_p, alpha), text="",
        )
        explanation.text = _text(explanation, alpha)
        out.append(explanation)
    return out
