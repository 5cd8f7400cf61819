"""Score each response of a document alone with the live task's own filters and `process_results`.

lm-eval scores the filtered answer (the first response for aime24 / minerva_math500 / mbpp_plus, all of
them at once for humaneval_plus's pass@1); pass@k and maj@k need each response's verdict. For every
sample line lm-eval logged, each response goes through the same filter ensemble as a one-response
request and then through `task.process_results(doc, [filtered])`, so its verdict is exactly what
lm-eval would have scored had it been the only response. Answers for maj@k are what the task's own
scorer compares (the helpers of its utils module). Code tasks also record what each program did.
Imported only by the runner (lm-eval is loaded there).
"""

from __future__ import annotations

import sys
from typing import Any

from rlgate.harness.lmeval import code_tasks
from rlgate.harness.lmeval.catalog import CODE_TASKS, PER_RESPONSE_METRIC, catalog_task
from rlgate.harness.lmeval.scored_responses import CodeChecks, ResponseScores, ScoredResponses


def _filtered(ensemble: Any, response: str, doc: dict[str, Any]) -> Any:
    """What lm-eval's FilterEnsemble makes of a request whose only response is `response`."""
    resps: Any = [[response]]
    for step in ensemble.filters:
        resps = list(step().apply(resps, [doc]))
    return resps[0]


def _aime_answer(module: Any, response: str) -> str:
    """aime/utils.py's process_results extraction ($...$, then \\boxed{}), normalised by its strip_string."""
    dollars = [i for i, char in enumerate(response) if char == "$"]
    answer = response if len(dollars) <= 1 else response[dollars[0] + 1: dollars[-1]]
    boxed = module.last_boxed_only_string(response)
    if boxed is not None:
        try:
            inner = module.remove_boxed(boxed)
            if inner is not None:
                answer = inner
        except (AssertionError, IndexError):
            pass
    try:
        return str(module.strip_string(answer))
    except Exception:
        return answer


def _answer(family: str, module: Any, response: str) -> str:
    if family.startswith("aime"):
        return _aime_answer(module, response)
    if family.startswith("minerva_math"):
        return str(module.normalize_final_answer(module.get_unnormalized_answer(response)))
    return response


def _code(task: str, doc: dict[str, Any], filtered: Any) -> tuple[str, str | None, str | None]:
    code = filtered[0] if isinstance(filtered, list) else str(filtered)
    return code, code_tasks.public_program(task, doc, code), code_tasks.hidden_program(task, doc, code)


def rescore(leaf: str, task: Any, samples: list[dict[str, Any]], repeats: int) -> ScoredResponses | None:
    """Per-response verdicts of a leaf (None: not a task rlgate rescores, or one response per document and no code)."""
    family = catalog_task(leaf)
    if family is None or family not in PER_RESPONSE_METRIC:
        return None
    code = family in CODE_TASKS
    if repeats <= 1 and not code:
        return None
    metric = PER_RESPONSE_METRIC[family]
    ensembles = {e.name: e for e in getattr(task, "_filters", [])}
    scorer = task.config.process_results
    module = sys.modules.get(getattr(scorer, "__module__", "")) if callable(scorer) else None
    out: dict[str, dict[int, ResponseScores]] = {}
    pending: list[tuple[str, int, list[str], list[tuple[str, str | None, str | None]]]] = []
    for sample in samples:
        filt = str(sample.get("filter", "none"))
        ensemble = ensembles.get(filt)
        resps = sample.get("resps") or []
        responses = [str(r) for r in (resps[0] if resps and isinstance(resps[0], list) else resps)]
        if ensemble is None or not responses:
            continue
        doc = sample["doc"]
        filtered = [_filtered(ensemble, r, doc) for r in responses]
        correct = [float(task.process_results(doc, [f])[metric]) for f in filtered]
        answers = [_answer(family, module, r) for r in responses] if module is not None else list(responses)
        out.setdefault(filt, {})[int(sample["doc_id"])] = ResponseScores(answers=answers, correct=correct)
        if code:
            pending.append((filt, int(sample["doc_id"]), responses, [_code(leaf, doc, f) for f in filtered]))
    if code:
        _code_checks(out, pending, samples, leaf)
    return ScoredResponses(task=leaf, metric=metric, filters=out) if out else None


def _code_checks(out: dict[str, dict[int, ResponseScores]], pending: list[Any], samples: list[dict[str, Any]],
                 leaf: str) -> None:
    """Run every response's shown and hidden tests (each program once) and record the outcomes."""
    programs = [p for _, _, _, parts in pending for part in parts for p in part if p is not None]
    code_tasks.EVALUATOR.run(programs)
    targets = {int(s["doc_id"]): str(s.get("target", "")) for s in samples}
    for filt, doc_id, _, parts in pending:
        scored_programs = [code + "\n" + targets[doc_id] for code, _, _ in parts]
        outcomes = code_tasks.EVALUATOR.run(scored_programs)
        public = [None if p is None else _passed(p) for _, p, _ in parts]
        hidden = [None if h is None else _passed(h) for _, _, h in parts]
        out[filt][doc_id].code = CodeChecks(outcomes=[o.status for o in outcomes],
                                            wrong_output=[o.wrong_output for o in outcomes],
                                            public=public, hidden=hidden)


def _passed(program: str) -> bool:
    found = code_tasks.EVALUATOR.outcome(program)
    return bool(found is not None and found.passed)
