"""The classifier registry: which family classifier claims a task, and classifying whole runs.

Built-in families (GSM8K, MMLU-Pro, IFEval) are registered at import; `register_classifier` puts a
user's classifier in front of them, and so does a package's `"badcase_classifier.<name>"` entry point in
the `rlgate.plugins` group (imported on the first classification). Tasks whose samples carry agent
trajectories get the agent taxonomy (`badcases.agent`) unless a user's classifier claims them. Tasks no
classifier claims fall back to right / wrong / invalid.
"""

from __future__ import annotations

from typing import cast

from rlgate.badcases.agent import AgentClassifier
from rlgate.badcases.columns import RunOutcomes, TaskColumns
from rlgate.badcases.families import BUILTIN_CLASSIFIERS, Gsm8kClassifier, MmluProClassifier
from rlgate.badcases.taxonomy import (
    ClassifyOptions,
    FailureClassifier,
    GenericClassifier,
    SampleOutcome,
    TaskBatchClassifier,
)
from rlgate.registry import Registry
from rlgate.results.models import DocId, RunResult, TaskResult

#: family classifiers, first match wins; user registrations go in front of the built-in ones
_REGISTRY: list[FailureClassifier] = list(BUILTIN_CLASSIFIERS)
_FALLBACK = GenericClassifier()
#: classifiers of installed packages (entry points `badcase_classifier.<name>`), behind those registered in code
PLUGINS: Registry[FailureClassifier] = Registry("badcase_classifier", {})
_loaded: list[FailureClassifier] | None = None


def plugin_classifiers() -> list[FailureClassifier]:
    """The entry-point classifiers, built once (call `PLUGINS.refresh()` and `reload_plugins()` after installing)."""
    global _loaded
    if _loaded is None:
        _loaded = [PLUGINS.get(name) for name in sorted(PLUGINS.plugins())]
    return _loaded


def reload_plugins() -> None:
    """Forget the entry-point classifiers built so far (the next classification reads them again)."""
    global _loaded
    _loaded = None
    PLUGINS.refresh()


def register_classifier(classifier: FailureClassifier) -> None:
    """Add a family classifier; later registrations take precedence over earlier ones."""
    _REGISTRY.insert(0, classifier)


_AGENT = AgentClassifier()


def classifier_for(task: str, result: TaskResult | None = None) -> FailureClassifier:
    """A user's classifier that claims the task; else the agent taxonomy when its samples are trajectories;
    else the built-in family that claims it; else right / wrong / invalid."""
    user = next((c for c in [*_REGISTRY, *plugin_classifiers()] if c not in BUILTIN_CLASSIFIERS and c.claims(task)),
                None)
    if user is not None:
        return user
    if result is not None and result.is_agent:
        return _AGENT
    return next((c for c in _REGISTRY if c.claims(task)), _FALLBACK)


def classify_run(run: RunResult, options: ClassifyOptions | None = None,
                 tasks: list[str] | None = None) -> dict[tuple[str, DocId], SampleOutcome]:
    """Classify every sample of a run (or of the named leaf tasks), keyed by (task, doc_id)."""
    options = options or ClassifyOptions()
    out: dict[tuple[str, DocId], SampleOutcome] = {}
    for name, result in run.tasks.items():
        if tasks is not None and name not in tasks:
            continue
        classifier = classifier_for(name, result)
        if isinstance(classifier, TaskBatchClassifier) and classifier.batches():  # outcomes carry their task
            batch = classifier.classify_many(name, result.samples, options)
            out.update(((name, outcome.doc_id), outcome) for outcome in batch)
        else:
            for sample in result.samples:
                outcome = classifier.classify(name, sample, options)
                out[outcome.key] = outcome
    return out


def classify_columns(run: RunResult, options: ClassifyOptions | None = None) -> RunOutcomes | None:
    """`classify_run` held as task columns (`badcases.columns`), when every task of the run is classified by
    a built-in right/wrong family (GSM8K, MMLU-Pro) and names each document once; None otherwise (then the
    caller classifies into objects). The gate's path: no object per sample."""
    options = options or ClassifyOptions()
    parts: list[TaskColumns] = []
    for name, result in run.tasks.items():
        classifier = classifier_for(name, result)
        if type(classifier) not in _COLUMNAR:
            return None
        part = cast("Gsm8kClassifier | MmluProClassifier", classifier).classify_columns(name, result.samples, options)
        if len(set(part.doc_ids)) != len(part.doc_ids):  # a document twice: the dict keeps one, columns both
            return None
        parts.append(part)
    return RunOutcomes(parts)


#: the built-in classifiers that classify into columns (exactly these types: a subclass may change anything)
_COLUMNAR = (Gsm8kClassifier, MmluProClassifier)
