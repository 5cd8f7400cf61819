"""Running a subset of a task's documents through lm-eval without changing a single prompt.

lm-eval's `simple_evaluate(samples={task: [doc indices]})` evaluates a subset (logged under the true
doc ids when the indices are sorted), but (0.4.13) it draws random few-shot examples from one
generator advanced document by document, so document i of a subset would get other examples than
in a full run: another prompt, another cache key, generated twice. Here the few-shot contexts are
pinned to the ones a full run builds, so a sequential check's looks, and a later full run, extend
the cache instead of regenerating any document.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lm_eval.api.group import Group

from rlgate._core.errors import InputError
from rlgate.contract.models import Protocol, Sequential
from rlgate.harness.lmeval.tasks import LoadedSuite
from rlgate.results.shard import shard_range


def select_look(suite: LoadedSuite, protocol: Protocol, look: int | None, seed: int) -> dict[str, list[int]]:
    """Restrict each leaf to the documents of looks 1..`look` of its seeded order (protocol.sequential);
    return, per leaf, the documents left for later looks, in that order. `look` None: nothing changes."""
    if look is None:
        return {}
    plan = protocol.sequential or Sequential()
    unseen: dict[str, list[int]] = {}
    for leaf, task in suite.leaves.items():
        base = suite.samples.get(leaf) or list(range(len(task.eval_docs)))  # a limit keeps the first documents
        order = Sequential.order(leaf, len(base), seed)
        counts = plan.counts(len(base))
        upto = counts[min(look, len(counts)) - 1] if base else 0
        suite.samples[leaf] = sorted(base[i] for i in order[:upto])
        unseen[leaf] = [base[i] for i in order[upto:]]
        _pin_fewshot(task, suite.samples[leaf])
    return unseen


def select_shard(suite: LoadedSuite, shard: tuple[int, int] | None) -> dict[str, int]:
    """Restrict each leaf to shard K of N: the K-th of N contiguous ranges of its documents (after a limit),
    few-shot contexts as in a full run; return each leaf's documents in the whole run. None: nothing changes."""
    if shard is None:
        return {}
    k, n = shard
    base_of: dict[str, int] = {}
    for leaf, task in suite.leaves.items():
        base = suite.samples.get(leaf) or list(range(len(task.eval_docs)))
        base_of[leaf] = len(base)
        window = shard_range(len(base), shard)
        suite.samples[leaf] = base[window.start:window.stop]
        _pin_fewshot(task, suite.samples[leaf])
    prune(suite, [leaf for leaf in suite.leaves if not suite.samples[leaf]])  # fewer documents than shards
    if not suite.top:
        raise InputError(f"shard {k}/{n} holds no document: every task has fewer than {n} documents",
                         field="--shard", fix="use fewer shards (protocol.executor.shards or --shard K/N)")
    return base_of


def _pin_fewshot(task: Any, chosen: list[int]) -> None:
    """Few-shot contexts of `chosen` exactly as a full run builds them (one generator advanced over every
    document in order). Only tasks that draw random examples need it: first_n and zero-shot do not."""
    shots = task.config.num_fewshot or 0
    sampler = getattr(task, "sampler", None)
    if shots == 0 or sampler is None or type(sampler).__name__ == "FirstNSampler":
        return
    original: Callable[..., Any] = task.fewshot_context
    state: dict[str, Any] = {"calls": 0, "contexts": None}

    def fewshot_context(doc: Any, num_fewshot: int, **kwargs: Any) -> Any:
        if state["contexts"] is None:  # first call: the generator is at its seed, as in a full run
            docs = task.eval_docs
            state["contexts"] = [original(d, num_fewshot, **{**kwargs, "gen_prefix": task.doc_to_prefix(d)})
                                 for d in docs]
        index = chosen[state["calls"]] if state["calls"] < len(chosen) else None
        state["calls"] += 1
        if index is None:
            return original(doc, num_fewshot, **kwargs)
        return state["contexts"][index]

    task.fewshot_context = fewshot_context


def leave_out(suite: LoadedSuite, leaves: list[str], responses: Path) -> None:
    """Take leaf tasks out of what lm-eval evaluates (a group then scores the leaves left); a group left
    without tasks goes too. Imported responses that answer none of a leaf's documents must not be scored
    as empty answers: on multiple-choice tasks lm-eval's scorer would guess letters into the group score."""
    prune(suite, leaves)
    if not suite.top:
        raise InputError("no imported response answers a document of any task in the suite", file=responses,
                         fix="check the rows' task names and doc ids against the suite (rlgate validate lists them)")


def prune(suite: LoadedSuite, leaves: list[str]) -> None:
    """Take the leaf tasks `leaves` (and groups left empty) out of what lm-eval evaluates."""
    if not leaves:
        return
    gone = set(leaves)

    def keep(group: Group) -> bool:
        for child in list(group):
            name = child.name if isinstance(child, Group) else child.task_name
            if (isinstance(child, Group) and not keep(child)) or name in gone:
                group.pop(name)
        return len(group) > 0

    suite.top = [item for item in suite.top
                 if (keep(item) if isinstance(item, Group) else item.task_name not in gone)]
