"""The rollout card (how responses were produced and counted) and the privacy scrub of extensions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from rlgate.contract.loader import ResolvedContract
from rlgate.engine.coverage import shortfalls
from rlgate.engine.models import Decision
from rlgate.report.fmt import iso_utc
from rlgate.report.model import RolloutCard, RunCard
from rlgate.results.drops import RULE as DROPS_RULE
from rlgate.results.drops import drops_manifest
from rlgate.results.manifest import RunManifest
from rlgate.results.models import RunResult

#: What rlgate's gate semantics count, stated for reviewers.
DEFAULT_REPORTING_RULES = (
    "Empty or unparseable answers are scored by the task's filter as lm-eval does ('[invalid]' is wrong) "
    "and counted in answer_parse_failure_rate.",
    "A document with no response (timeout, crash) is scored wrong, never dropped; it stays in the pair counts.",
    "Baseline and candidate samples are paired by task and document; unpaired documents are listed, "
    "never dropped silently.",
    "A gate whose metric is missing is 'nodata' and one that cannot be computed is 'error'; neither passes.",
    "A score that is NaN, infinite or not a number marks its document corrupt for that metric: listed under "
    "drops and in decision.json, and a gate on that metric is 'error' unless allow_corrupt tolerates it "
    "(then the documents are excluded and counted).",
    "Identical duplicate sample lines are collapsed and counted; duplicates that disagree are refused.",
)
SEQUENTIAL_RULE = ("Sequential gating: documents are generated in a seeded random order, look by look; those after "
                   "the look at which the decision was settled are never generated. They are listed under drops as "
                   "'not generated: settled at look k', are not missing (coverage counts them out) and are not scored.")
#: corrupt documents listed one by one in the drops section (all of them stay in decision.json)
_CORRUPT_LISTED = 100
#: Keys of sample-level content removed from other layers' sections for release_gate_only tasks.
SAMPLE_KEYS = frozenset({"prompt", "prompts", "response", "responses", "filtered", "target", "doc",
                         "document", "question", "answer", "example", "examples", "samples", "text",
                         "arguments", "completion", "generation", "input", "output"})
WITHHELD = "[withheld: release_gate_only split]"
#: manifest fields the run card shows in rows of their own, left out of its "other fields"
_SHOWN = frozenset({"library_versions", "wall_time_s", "seeds"})


def as_dict(value: Any) -> dict[str, Any]:
    """Another layer's section (e.g. the monitor report) given as a pydantic model or a mapping, as JSON data."""
    if value is None:
        return {}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"a report section must be a pydantic model or a mapping, not {type(value).__name__}")


def _tokens(run: RunResult) -> tuple[int | None, int]:
    total, known, responses = 0, False, 0
    for task in run.tasks.values():
        for sample in task.samples:
            responses += len(sample.responses)
            if sample.response_tokens:
                known = True
                total += sum(sample.response_tokens)
    return (total if known else None), responses


def _dedupe(versions: dict[str, str]) -> dict[str, str]:
    """`lm_eval` and `lm_eval_version` (lm-eval's and rlgate's spellings) are one library."""
    out: dict[str, str] = {}
    for key, version in versions.items():
        out.setdefault(key.removesuffix("_version"), version)
    return out


def _iso(value: Any) -> str | None:
    return None if value is None else iso_utc(value)


def run_card(role: str, run: RunResult | None, manifest: RunManifest | None) -> RunCard:
    """One run's provenance: the results' own record (seeds, versions, tokens), completed by rlgate's run manifest
    (the one given, else the one the run carries)."""
    prov = run.provenance if run else None
    if manifest is None and prov is not None:
        manifest = prov.manifest
    tokens, responses = _tokens(run) if run else (None, 0)
    if tokens is None and manifest is not None:  # the samples lack token counts: the manifest's per-task count
        tokens = manifest.tokens_out
    seeds: dict[str, int] = dict(prov.seeds) if prov else {}
    versions = dict(prov.library_versions) if prov else {}
    if manifest is not None:
        seeds.update(manifest.recorded_seeds())
        versions.update(manifest.library_versions)
    wall = prov.wall_time_s if prov and prov.wall_time_s is not None else None
    return RunCard(
        role=role,
        source=prov.source if prov else None,
        model=(prov.model if prov and prov.model else None),
        checkpoint=manifest.checkpoint if manifest else None,
        checkpoint_fingerprint=(prov.checkpoint_fingerprint if prov else None)
        or (manifest.checkpoint_fingerprint if manifest else None),
        lm_eval_version=prov.lm_eval_version if prov else None,
        library_versions=_dedupe(versions), date=_iso(prov.date if prov else None),
        wall_time_s=wall if wall is not None or manifest is None else manifest.wall_time_s,
        response_tokens=tokens, responses=responses,
        chat_template=prov.chat_template if prov else None,
        system_instruction=prov.system_instruction if prov else None,
        fewshot_as_multiturn=prov.fewshot_as_multiturn if prov else None,
        seeds=seeds, manifest=manifest.model_dump(mode="json", exclude=set(_SHOWN)) if manifest else {},
    )


def rollout_card(decision: Decision, contract: ResolvedContract | None, baseline: RunResult | None,
                 candidate: RunResult | None, manifests: Mapping[str, RunManifest] | None,
                 private: frozenset[str] = frozenset()) -> RolloutCard:
    """Protocol, seeds, versions, fingerprints, counting rules, drops, tokens and wall time.

    Dropped agent runs of `private` (release_gate_only) tasks keep their ids and kind, not their error text.
    """
    given = dict(manifests or {})
    runs = [run_card(role, run, given.get(role))
            for role, run in (("baseline", baseline), ("candidate", candidate))
            if run is not None or role in given]
    protocol = contract.contract.protocol.model_dump(mode="json") if contract else {}
    for backend in ("vllm", "hf", "openai"):  # only the options of the backend in use
        if protocol and protocol.get("backend") != backend:
            protocol.pop(backend, None)
    if protocol:
        protocol["decision_seed"] = decision.seed
        protocol["alpha"] = decision.alpha
    task_protocols: dict[str, dict[str, Any]] = {}
    for run in (candidate, baseline):
        for name, task in (run.tasks.items() if run else []):
            task_protocols.setdefault(name, task.protocol.model_dump(mode="json", exclude_defaults=True,
                                                                     exclude={"scoring"}))
    drops: list[dict[str, Any]] = []
    for pairing in decision.pairing:
        if pairing.only_baseline or pairing.only_candidate or pairing.document_mismatch:
            drops.append({"run": "pairing", "task": pairing.task, "only_baseline": pairing.only_baseline,
                          "only_candidate": pairing.only_candidate,
                          "document_mismatch": pairing.document_mismatch,
                          "examples": ", ".join(pairing.examples)})
    drops += _integrity_drops(decision, baseline, candidate)
    for short in shortfalls(decision.gates):  # what the contract expects and a run lacks (docs/coverage.md)
        drops.append({"run": short.run, "task": short.task, "gate": short.gate,
                      "coverage": f"{short.answered}/{short.expected} (< min_coverage {short.min_coverage:g})",
                      "causes": "; ".join(short.causes) or short.check,
                      "examples": ", ".join(short.examples)})
    if decision.sequential is not None:  # sequential gating: what was never generated, and why
        for ng in decision.sequential.not_generated:
            shown = ", ".join(ng.documents[:_CORRUPT_LISTED])
            more = len(ng.documents) - _CORRUPT_LISTED
            drops.append({"run": "sequential", "task": ng.task, "not_generated": ng.count, "note": ng.note,
                          "documents": shown + (f" and {more} more (all in decision.json 'sequential')"
                                                if more > 0 else "")})
    dropped = drops_manifest(baseline, candidate, private)
    rules = list(DEFAULT_REPORTING_RULES)
    if decision.sequential is not None and decision.sequential.not_generated:
        rules.append(f"{SEQUENTIAL_RULE} Test: {decision.sequential.procedure_label}.")
    if dropped.trajectories and DROPS_RULE not in rules:
        rules.append(DROPS_RULE)
    return RolloutCard(protocol=protocol, task_protocols=task_protocols, runs=runs, reporting_rules=rules,
                       drops=drops, dropped_runs=dropped if dropped.trajectories else None,
                       protocol_differences=list(decision.protocol_differences))


def _integrity_drops(decision: Decision, baseline: RunResult | None,
                     candidate: RunResult | None) -> list[dict[str, Any]]:
    """Corrupt scores by run, task, document and filter; collapsed duplicate lines by run and task."""
    out: list[dict[str, Any]] = []
    grouped: dict[tuple[str, str], dict[Any, list[str]]] = {}
    for item in decision.corrupt:
        docs = grouped.setdefault((item.run, item.task), {})
        docs.setdefault(item.doc_id, []).append(f"{item.metric}/{item.filter} = {item.value}"
                                                + (f" ({item.where})" if item.where else ""))
    for (role, task), docs in grouped.items():
        listed = [f"doc {doc}: {'; '.join(parts)}" for doc, parts in list(docs.items())[:_CORRUPT_LISTED]]
        if len(docs) > _CORRUPT_LISTED:
            listed.append(f"and {len(docs) - _CORRUPT_LISTED} more documents (all in decision.json 'corrupt')")
        out.append({"run": role, "task": task, "corrupt_documents": len(docs),
                    "corrupt_scores": sum(len(p) for p in docs.values()), "documents": listed})
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        for name, task_result in (run.tasks.items() if run is not None else []):
            if task_result.duplicate_lines:
                out.append({"run": role, "task": name, "duplicate_lines_collapsed": task_result.duplicate_lines})
    return out


def scrub_private(value: Any, private: frozenset[str], inside: bool = False) -> Any:
    """Other layers' sections with sample content of private tasks replaced by a marker.

    A dict is private when its `task` field names a private task, or when it is the value of a key
    that names one; inside it, every sample-like field and every string listed is withheld. Numbers stay.
    """
    if isinstance(value, dict):
        here = inside or str(value.get("task", "")) in private
        out: dict[str, Any] = {}
        for key, item in value.items():
            if here and key in SAMPLE_KEYS:
                out[key] = WITHHELD
            else:
                out[key] = scrub_private(item, private, here or str(key) in private)
        return out
    if isinstance(value, list):
        return [WITHHELD if inside and isinstance(item, str) else scrub_private(item, private, inside)
                for item in value]
    return value
