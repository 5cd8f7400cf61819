"""`rlgate-replay`: an lm-eval model that answers each request with a stored response.

Imported generations are scored by lm-eval itself — the task's own filters (regex extraction,
take_first) and metrics — exactly as a live model's answers would be. Registered with lm-eval's
model registry, so `lm_eval --model rlgate-replay --model_args responses=FILE.jsonl` works too
once this module is imported.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from rlgate.harness.lmeval.responses import MatchResult, match_rows, read_responses
from rlgate.results.manifest import Drops


@register_model("rlgate-replay")
class ReplayLM(LM):
    """Answers generate_until requests from matched responses; a document without one gets an empty answer."""

    def __init__(self, responses: str | MatchResult | None = None, samples: dict[str, list[int]] | None = None,
                 groups: dict[str, list[str]] | None = None, **_: Any) -> None:
        super().__init__()
        self._file = Path(responses) if isinstance(responses, str) else None
        self.match: MatchResult | None = responses if isinstance(responses, MatchResult) else None
        self.samples = samples or {}
        self.groups = groups or {}
        self.drops: dict[str, Drops] = defaultdict(Drops)
        self.requests: dict[str, int] = defaultdict(int)
        #: task -> (requests whose recorded source prompt is not the context lm-eval rendered, first such doc id)
        self.prompt_differs: dict[str, list[int]] = defaultdict(lambda: [0, -1])

    def _ensure_match(self, requests: list[Instance]) -> MatchResult:
        """Standalone use (lm-eval CLI): match the file against the documents the requests carry."""
        if self.match is None:
            assert self._file is not None, "rlgate-replay needs model_args responses=FILE.jsonl"
            docs: dict[str, dict[int, Any]] = defaultdict(dict)
            for inst in requests:
                docs[inst.task_name][inst.doc_id] = inst.doc
            ordered = {t: [d[i] for i in sorted(d)] for t, d in docs.items()}
            groups = dict(self.groups)
            for row_task in {r.task for r in read_responses(self._file)}:
                if row_task not in ordered:
                    groups.setdefault(row_task, [t for t in ordered if t.startswith(row_task + "_")])
            self.match = match_rows(read_responses(self._file), ordered, groups, source=str(self._file))
        return self.match

    def _true_id(self, inst: Instance) -> int:
        chosen = self.samples.get(inst.task_name)
        return chosen[inst.doc_id] if chosen else inst.doc_id

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        match = self._ensure_match(requests)
        served: dict[tuple[str, int], int] = defaultdict(int)
        out: list[str] = []
        for inst in requests:
            key = (inst.task_name, self._true_id(inst))
            answers = match.responses.get(key, [])
            index = served[key]
            served[key] += 1
            self.requests[inst.task_name] += 1
            recorded = match.prompts.get(key)
            if recorded is not None and recorded.strip() != str(inst.args[0]).strip():
                differs = self.prompt_differs[inst.task_name]
                differs[0] += 1
                differs[1] = key[1] if differs[1] < 0 else differs[1]
            if index < len(answers):
                out.append(answers[index])
                if not answers[index].strip():
                    self.drops[inst.task_name].empty += 1
            else:
                out.append("")
                drops = self.drops[inst.task_name]
                drops.missing += 1
                if len(drops.examples) < 5:
                    drops.examples.append(f"{key[0]} doc {key[1]}: no imported response")
        return out

    def prompt_notes(self) -> list[str]:
        """One line per task whose imported responses answered another prompt than lm-eval's (an input difference)."""
        return [f"{task}: {count} of {self.requests[task]} imported responses were generated from a prompt other "
                f"than the one lm-eval renders for the task (first: doc {first}); they answer a different input, so a "
                "gate against a run prompted by lm-eval compares two protocols; compare runs prompted the same way"
                for task, (count, first) in sorted(self.prompt_differs.items()) if count]

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        raise NotImplementedError("imported responses can only score generate_until tasks "
                                  "(loglikelihood tasks need the model itself)")

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("imported responses can only score generate_until tasks")

    def get_model_info(self) -> dict[str, Any]:
        return {"model_source": "rlgate-replay", "responses": str(self._file or "")}
