"""lm-eval's code tasks (humaneval_plus, mbpp_plus) with their code execution moved into rlgate's sandbox.

lm-eval 0.4.13's humaneval/utils.py and mbpp/utils.py load Hugging Face `evaluate`'s code_eval at import
(a script fetched from the Hub, which runs programs in-process threads with no isolation). rlgate
imports those modules itself with `evaluate.load("code_eval")` answered by `SandboxedCodeEval`: the
same `compute(references, predictions, k)` contract (the program is `prediction + "\\n" + test`,
pass@k by Chen et al.'s estimator averaged over problems), each program run by `rlgate.sandbox`. So
lm-eval's own prompts, filters (build_predictions), metric functions and aggregation score the task,
and only the execution differs. Each program's outcome (passed, wrong output, syntax error, timeout)
is kept by program hash, so rescoring per response runs nothing twice and badcases can name it.
"""

from __future__ import annotations

import doctest
import hashlib
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.catalog import CODE_TASKS, catalog_task
from rlgate.sandbox import Limits, Outcome, SandboxUnavailable, library_paths, run_programs
from rlgate.stats.passk import pass_at_k


def _key(program: str) -> str:
    return hashlib.sha256(program.encode("utf-8", "surrogatepass")).hexdigest()


class SandboxedCodeEval:
    """What `evaluate.load("code_eval")` returns to lm-eval's code tasks, running every program in the sandbox."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._outcomes: dict[str, Outcome] = {}
        self._lock = threading.Lock()

    def outcome(self, program: str) -> Outcome | None:
        """The outcome of a program this evaluator ran (None: never run)."""
        return self._outcomes.get(_key(program))

    def run(self, programs: list[str]) -> list[Outcome]:
        """Outcomes of the programs, each run once per evaluator (sandbox errors are raised, never scored)."""
        todo = sorted({_key(p): p for p in programs if _key(p) not in self._outcomes}.items())
        if todo:
            try:
                done = run_programs([p for _, p in todo], self.limits, libraries=library_paths())
            except SandboxUnavailable as exc:
                raise InputError(f"model code cannot be run safely here: {exc}", field="unsafe_code",
                                 fix="run the code suite on a Linux machine where unshare(1) may create "
                                     "namespaces (docs/sandbox.md)") from None
            with self._lock:
                self._outcomes.update({key: out for (key, _), out in zip(todo, done, strict=True)})
        return [self._outcomes[_key(p)] for p in programs]

    def compute(self, references: list[str], predictions: list[list[str]],
                k: list[int] | tuple[int, ...] | int = (1, 10, 100), num_workers: int = 4,
                timeout: float = 3.0) -> tuple[dict[str, float], dict[int, list[Any]]]:
        """HF code_eval's result: ({"pass@k": mean over problems}, {problem: [(index, {"passed": ..})]})."""
        ks = [k] if isinstance(k, int) else list(k)
        programs = [candidate + "\n" + test for test, candidates in zip(references, predictions, strict=True)
                    for candidate in candidates]
        outcomes = iter(self.run(programs))
        results: dict[int, list[Any]] = {}
        totals, correct = [], []
        for problem, candidates in enumerate(predictions):
            rows = [(i, {"passed": next(outcomes).passed}) for i in range(len(candidates))]
            results[problem] = rows
            totals.append(len(rows))
            correct.append(sum(r[1]["passed"] for r in rows))
        scores = {f"pass@{one}": sum(pass_at_k(n, c, one) for n, c in zip(totals, correct, strict=True)) / len(totals)
                  for one in ks if totals and all(n >= one for n in totals)}
        return scores, results


#: the evaluator of this process (one per process: lm-eval's modules hold it in a global)
EVALUATOR = SandboxedCodeEval()


class _Loader:
    """`evaluate.load` while lm-eval's code module imports: code_eval is the sandbox, anything else refused."""

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if name != "code_eval":
            raise InputError(f"lm-eval's code task asked evaluate for '{name}'", fix="report this to rlgate")
        return EVALUATOR


def install(task: str) -> None:
    """Import lm-eval's module of a code task with code_eval answered by the sandbox (lm-eval then reuses it)."""
    known = catalog_task(task)
    if known is None or known not in CODE_TASKS:
        return
    folder, _ = CODE_TASKS[known]
    import evaluate
    import lm_eval.tasks

    path = Path(lm_eval.tasks.__file__).parent / folder / "utils.py"
    name = f"lm_eval.tasks.{folder}.utils"
    current = sys.modules.get(name)
    if current is not None and getattr(current, "__rlgate_sandboxed__", False):
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"lm-eval has no {folder}/utils.py", file=path,
                         fix="install lm-eval 0.4.13 (rlgate's hf extra)")
    module = importlib.util.module_from_spec(spec)
    module.__mtime__ = path.stat().st_mtime_ns  # type: ignore[attr-defined]  # lm-eval's reuse check
    module.__rlgate_sandboxed__ = True  # type: ignore[attr-defined]
    asked = evaluate.load
    evaluate.load = _Loader()
    try:
        spec.loader.exec_module(module)
    finally:
        evaluate.load = asked
    sys.modules[name] = module


# --------------------------------------------------------------------------- public and hidden tests
def public_program(task: str, doc: dict[str, Any], code: str) -> str | None:
    """The program that runs `code` on the examples the prompt shows (None: the prompt shows none rlgate reads).

    HumanEval+: the docstring's `>>>` examples, compared as Python values; MBPP+: the three asserts of
    `test_list` the prompt lists."""
    known = catalog_task(task) or task
    if known.startswith("mbpp"):
        tests = doc.get("test_list")
        if isinstance(tests, list) and tests:
            return code + "\n" + "\n".join(str(t) for t in tests)
        return None
    prompt = doc.get("prompt")
    if not isinstance(prompt, str):
        return None
    try:
        examples = doctest.DocTestParser().get_examples(prompt)
    except ValueError:
        return None
    checks = []
    for example in examples:
        want = example.want.split('"""')[0].split("'''")[0].strip()  # the docstring's end is not the value
        check = f"assert ({example.source.strip()}) == ({want})"
        if want and _compiles(check):
            checks.append(check)
    return code + "\n" + "\n".join(checks) + "\n" if checks else None


def _compiles(source: str) -> bool:
    """Whether an example check is Python (compiled only, never run here)."""
    try:
        compile(source, "<example>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def hidden_program(task: str, doc: dict[str, Any], code: str) -> str | None:
    """The program of the tests the prompt does not show (HumanEval+: lm-eval's target; MBPP+: the `test` field)."""
    known = catalog_task(task) or task
    if known.startswith("mbpp"):
        test = doc.get("test")
        return code + "\n" + test + "\n" if isinstance(test, str) and test.strip() else None
    test, entry = doc.get("test"), doc.get("entry_point")
    if isinstance(test, str) and isinstance(entry, str):
        return code + "\n" + test + f"\ncheck({entry})"
    return None
