"""Explain why each family's score moved: answers lost to format or truncation, to wrong answers, to instructions.

A drop is called a format problem, not lost knowledge, only when unparseable (or cut-off) answers
are most of the answers the candidate lost and, on the documents both runs answered in a parseable
form, the candidate is not significantly worse (one-sided exact McNemar). When parsed-but-wrong
answers dominate, the text says so, whether or not that is significant. IFEval, scored per
instruction, is explained by the instruction groups its lost prompts violated. Where a gate reads
the family's metric, the text quotes that gate's p-value (the one the verdict rests on), so the
explanation and the gate table never disagree.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter

from rlgate.badcases.clusters import Outcomes, mcnemar_greater
from rlgate.badcases.columns import PairCounts, count_rows, loss_kind
from rlgate.badcases.models import DropDriver, DropExplanation
from rlgate.badcases.taxonomy import SampleOutcome
from rlgate.contract.gatekinds import GATE_KINDS
from rlgate.engine import fmt
from rlgate.engine.models import GateVerdict
from rlgate.harness.vocabulary import family_of

#: Format and truncation losses must be more than this share of the lost answers to be "the" cause.
MOST = 0.5
#: ... and at least this share to be named as part of the cause.
PART = 0.25
#: which gate's failure explains first: decisive comparisons, then decisive checks of the candidate alone, then
#: the rest (primary, regression, hard, diagnostic), each in the gate kinds' order
_KIND_ORDER = {spec.kind: rank for rank, spec in enumerate(sorted(
    GATE_KINDS, key=lambda spec: (not spec.decisive, spec.candidate_only, GATE_KINDS.index(spec))))}


@dataclass(frozen=True)
class GateEvidence:
    """The gate on a family's metric: its name and the p its verdict rests on."""

    name: str
    p: float | None


def gate_evidence(gates: Sequence[GateVerdict] | None) -> dict[str, GateEvidence]:
    """Family -> the comparative gate that reads it (primary first, then regression, hard, diagnostic)."""
    out: dict[str, tuple[int, GateEvidence]] = {}
    for gate in gates or ():
        if gate.kind == "monitor" or gate.baseline is None or gate.candidate is None:
            continue
        task = gate.metric.split("/")[0]
        family = family_of(task)
        rank = _KIND_ORDER.get(gate.kind, 9)
        if family not in out or rank < out[family][0]:
            out[family] = (rank, GateEvidence(gate.name, fmt.deciding_p(gate.p_value, gate.p_adjusted)))
    return {family: evidence for family, (_, evidence) in out.items()}


def _loss_kind(outcome: SampleOutcome) -> str:
    return loss_kind(outcome.failures, outcome.parsed)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _driver(delta: float, lost: dict[str, int], knowledge_p: float | None, alpha: float) -> DropDriver:
    if delta > 0:
        return "improved"
    if delta == 0:
        return "none"
    non_knowledge = lost["format"] + lost["truncation"]
    total = non_knowledge + lost["wrong"]
    if total == 0:
        return "none"
    share = non_knowledge / total
    knowledge_lost = knowledge_p is not None and knowledge_p < alpha
    if share > MOST and not knowledge_lost:
        return "truncation" if lost["truncation"] > lost["format"] else "format"
    if share >= PART:
        return "format_and_knowledge"
    return "knowledge" if knowledge_lost else "wrong_answers"


def _head(e: DropExplanation, what: str, alpha: float) -> str:
    gate = ""
    if e.gate is not None:  # the gate's p against the alpha it was held to: never printed as alpha
        gate = f"; gate {e.gate}: {fmt.p(e.gate_p_value, alpha)}"
    return (f"{e.family}: {what} {_pct(e.baseline_accuracy)} → {_pct(e.candidate_accuracy)} "
            f"({100 * e.delta:+.1f} pts over {e.n_paired} paired documents{gate})")


def _text(e: DropExplanation, alpha: float) -> str:
    head = _head(e, "accuracy", alpha)
    if e.driver == "none":
        return head + "; nothing moved."
    lost_n = e.lost_to_format + e.lost_to_truncation + e.lost_to_wrong_answer
    if e.driver == "improved":
        return (f"{head}: {e.gained} answers gained and {lost_n} lost ({e.lost_to_format} to format, "
                f"{e.lost_to_truncation} to truncation, {e.lost_to_wrong_answer} parsed but wrong).")
    lost = (f"of the {lost_n} answers the baseline got right and the candidate lost, {e.lost_to_format} became "
            f"unparseable (format), {e.lost_to_truncation} were cut at max_tokens and {e.lost_to_wrong_answer} "
            f"were parsed but wrong; {e.gained} were gained")
    parsed = ""
    if e.baseline_accuracy_parsed is not None and e.candidate_accuracy_parsed is not None:
        significant = e.knowledge_p_value is not None and e.knowledge_p_value < alpha
        worse = "significantly worse" if significant else "not significantly worse"
        parsed = (f"; on the {e.n_both_parsed} documents both runs answered in a parseable form, accuracy "
                  f"{_pct(e.baseline_accuracy_parsed)} → {_pct(e.candidate_accuracy_parsed)} ({worse} at α={alpha:g}, "
                  "paired McNemar)")
    share = f"{e.lost_to_format + e.lost_to_truncation} of {lost_n}"
    verdict = {
        "format": f"the drop is a format problem, not lost knowledge: {share} lost answers were unparseable",
        "truncation": f"the drop comes from responses cut at max_tokens, not lost knowledge ({share} lost answers)",
        "format_and_knowledge": (f"the drop is partly format ({share} lost answers unparseable or cut off) and "
                                 "partly parsed-but-wrong answers"),
        "knowledge": "the drop is lost knowledge: parsed answers got significantly worse",
        "wrong_answers": (f"the drop is not a format problem: {e.lost_to_wrong_answer} of {lost_n} lost answers "
                          "were parsed but wrong"),
    }[e.driver]
    return f"{head}: {lost}{parsed}; {verdict}."


def _pairs(candidate: Outcomes, baseline: Outcomes) -> dict[str, list[tuple[SampleOutcome, SampleOutcome]]]:
    groups: dict[str, list[tuple[SampleOutcome, SampleOutcome]]] = defaultdict(list)
    for key, cand in candidate.items():
        base = baseline.get(key)
        if base is not None and base.doc_hash == cand.doc_hash:
            groups[cand.family].append((base, cand))
    return groups


def _per_instruction(pairs: list[tuple[SampleOutcome, SampleOutcome]]) -> bool:
    return any(f.kind == "instruction" for b, c in pairs if b.failures or c.failures
               for f in (*b.failures, *c.failures))


def _explain_instructions(family: str, pairs: list[tuple[SampleOutcome, SampleOutcome]],
                          evidence: GateEvidence | None, alpha: float) -> DropExplanation:
    """IFEval-style families: prompts lost or gained, and the instruction groups the lost prompts broke."""
    n = len(pairs)
    base_acc = sum(b.correct for b, _ in pairs) / n
    cand_acc = sum(c.correct for _, c in pairs) / n
    lost = [c for b, c in pairs if b.correct and not c.correct]
    gained = sum(c.correct and not b.correct for b, c in pairs)
    groups: Counter[str] = Counter()
    for outcome in lost:
        for cls in dict.fromkeys(f.cls for f in outcome.failures if f.kind == "instruction"):
            groups[cls] += 1
    fmt_lost = sum(any(f.kind == "format" for f in o.failures) for o in lost)
    trunc_lost = sum(any(f.kind == "truncation" for f in o.failures) for o in lost)
    delta = cand_acc - base_acc
    e = DropExplanation(
        family=family, n_paired=n, baseline_accuracy=base_acc, candidate_accuracy=cand_acc, delta=delta,
        lost_to_format=fmt_lost, lost_to_truncation=trunc_lost, lost_to_wrong_answer=len(lost) - fmt_lost,
        gained=gained, n_both_parsed=0, driver="improved" if delta > 0 else "instructions" if delta < 0 else "none",
        text="", gate=evidence.name if evidence else None, gate_p_value=evidence.p if evidence else None,
        instruction_losses=dict(groups.most_common()))
    head = _head(e, "prompts with every instruction followed", alpha)
    if e.driver == "none":
        e.text = head + "; nothing moved."
        return e
    top = ", ".join(f"{name.removeprefix('ifeval_').replace('_', ' ')} ({count})"
                    for name, count in groups.most_common(3))
    extra = []
    if fmt_lost:
        extra.append(f"{fmt_lost} lost prompts got an empty response")
    if trunc_lost:
        extra.append(f"{trunc_lost} were cut at max_tokens")
    tail = ("; " + "; ".join(extra)) if extra else ""
    if e.driver == "improved":
        e.text = f"{head}: {gained} prompts gained, {len(lost)} lost{tail}."
    else:
        e.text = (f"{head}: {len(lost)} prompts the baseline followed fully were lost and {gained} gained; "
                  f"the lost prompts broke {top or 'no scored instruction'}{tail}.")
    return e


def _count(pairs: list[tuple[SampleOutcome, SampleOutcome]]) -> PairCounts:
    """`columns.count_rows` over paired outcomes: one counting rule for both paths."""
    base = [b for b, _ in pairs]
    cand = [c for _, c in pairs]
    return count_rows(PairCounts(), [o.correct for o in base], [o.correct for o in cand],
                      [o.answered for o in base], [o.answered for o in cand], [o.failures for o in cand],
                      [o.parsed for o in cand])


_AGENT = attrgetter("agent")
_CANDIDATE = itemgetter(1)


def explain_drops(candidate: Outcomes, baseline: Outcomes, alpha: float = 0.05,
                  families: set[str] | None = None, gates: Sequence[GateVerdict] | None = None,
                  pairs_by_family: dict[str, list[tuple[SampleOutcome, SampleOutcome]]] | None = None,
                  family_kinds: dict[str, set[str]] | None = None,
                  counts_by_family: dict[str, PairCounts] | None = None) -> list[DropExplanation]:
    """One explanation per family both runs answered: right/wrong families by how answers were lost,
    per-instruction families (IFEval) by the instructions the lost prompts broke.

    `pairs_by_family`: the runs' outcomes already paired (`badcases.index.OutcomeIndex.pairs`);
    `family_kinds`: the failure kinds each family shows in either run (`OutcomeIndex.family_kinds`);
    `counts_by_family`: right/wrong families whose pairs were counted from columns (`OutcomeIndex.counts`).
    """
    evidence = gate_evidence(gates)
    out: list[DropExplanation] = []
    if pairs_by_family is None:
        pairs_by_family = _pairs(candidate, baseline)
    counted = counts_by_family or {}
    for family in sorted({*pairs_by_family, *counted}):
        if families is not None and family not in families:
            continue
        if family in counted:
            out.append(_explain_counts(family, counted[family], evidence.get(family), alpha))
            continue
        pairs = pairs_by_family[family]
        if any(map(_AGENT, map(_CANDIDATE, pairs))):
            out.append(_explain_agent(family, pairs, evidence.get(family), alpha))
            continue
        # a family that shows no instruction failure in either run has none among its pairs either
        may_have = family_kinds is None or "instruction" in family_kinds.get(family, ())
        if family == "ifeval" or (may_have and _per_instruction(pairs)):
            out.append(_explain_instructions(family, pairs, evidence.get(family), alpha))
            continue
        out.append(_explain_counts(family, _count(pairs), evidence.get(family), alpha))
    return out


def _explain_counts(family: str, counts: PairCounts, found: GateEvidence | None, alpha: float) -> DropExplanation:
    """A right/wrong family: how the answers the candidate lost were lost, and the knowledge test."""
    lost, n, both = counts.lost, counts.n, counts.both
    base_acc, cand_acc = counts.base_right / n, counts.cand_right / n
    knowledge_p = mcnemar_greater(counts.worse, counts.better) if both else None
    explanation = DropExplanation(
        family=family, n_paired=n, baseline_accuracy=base_acc, candidate_accuracy=cand_acc,
        delta=cand_acc - base_acc, lost_to_format=lost["format"], lost_to_truncation=lost["truncation"],
        lost_to_wrong_answer=lost["wrong"], gained=counts.gained, n_both_parsed=both,
        baseline_accuracy_parsed=counts.both_base_right / both if both else None,
        candidate_accuracy_parsed=counts.both_cand_right / both if both else None,
        knowledge_p_value=knowledge_p, driver=_driver(cand_acc - base_acc, lost, knowledge_p, alpha), text="",
        gate=found.name if found else None, gate_p_value=found.p if found else None,
    )
    explanation.text = _text(explanation, alpha)
    return explanation


def _words(cls: str) -> str:
    return cls.removeprefix("agent_").replace("_", " ")


def _explain_agent(family: str, pairs: list[tuple[SampleOutcome, SampleOutcome]], found: GateEvidence | None,
                   alpha: float) -> DropExplanation:
    """Agent trajectories: success gained and lost, what the lost ones failed by, and which failure classes
    grew or shrank between the runs (over the paired trajectories)."""
    lost = {"format": 0, "truncation": 0, "wrong": 0}
    lost_by: Counter[str] = Counter()
    gained = 0
    base_classes: Counter[str] = Counter()
    cand_classes: Counter[str] = Counter()
    for base, cand in pairs:
        base_classes.update(base.classes)
        cand_classes.update(cand.classes)
        if base.correct and not cand.correct:
            lost[_loss_kind(cand)] += 1
            lost_by.update(cand.classes)
        elif cand.correct and not base.correct:
            gained += 1
    n = len(pairs)
    base_acc = sum(b.correct for b, _ in pairs) / n
    cand_acc = sum(c.correct for _, c in pairs) / n
    explanation = DropExplanation(
        family=family, n_paired=n, baseline_accuracy=base_acc, candidate_accuracy=cand_acc, delta=cand_acc - base_acc,
        lost_to_format=lost["format"], lost_to_truncation=lost["truncation"], lost_to_wrong_answer=lost["wrong"],
        gained=gained, n_both_parsed=0, driver=_driver(cand_acc - base_acc, lost, None, alpha), text="",
        gate=found.name if found else None, gate_p_value=found.p if found else None)
    head = _head(explanation, "task success", alpha).replace("paired documents", "paired trajectories")
    lost_n = sum(lost.values())
    text = f"{head}: {gained} trajectories gained and {lost_n} lost"
    if lost_by:
        text += " (the lost ones: " + ", ".join(f"{_words(c)} {k}" for c, k in lost_by.most_common()) + ")"
    moved = [(c, base_classes[c], cand_classes[c]) for c in sorted({*base_classes, *cand_classes})
             if base_classes[c] != cand_classes[c]]
    moved.sort(key=lambda item: -(item[2] - item[1]))
    if moved:
        text += "; failures by class, baseline → candidate: " + ", ".join(f"{_words(c)} {b} → {k}"
                                                                        for c, b, k in moved)
    explanation.text = text + "."
    return explanation
