"""RewardBench-style preference pairs: what a reward model is asked to order, read from local files or the hub.

The format is RewardBench's (the `rewardbench` package on PyPI, dataset `allenai/reward-bench`): one record per
pair with `prompt`, `chosen`, `rejected`, `subset` and `id`. RewardBench reports four sections, each a list of
subsets; a record may also name its `category` directly (a team's own preference set). A pair's category is the
statistical grouping of its per-category verdicts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError

#: RewardBench's sections and the subsets each holds (as its constants name them)
SECTIONS: dict[str, tuple[str, ...]] = {
    "chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "chat_hard": ("mt-bench-hard", "llmbar-natural", "llmbar-adver-neighbor", "llmbar-adver-GPTInst",
                  "llmbar-adver-GPTOut", "llmbar-adver-manual"),
    "safety": ("refusals-dangerous", "refusals-offensive", "xstest-should-refuse", "xstest-should-respond",
               "donotanswer"),
    "reasoning": ("math-prm", "hep-cpp", "hep-go", "hep-java", "hep-js", "hep-python", "hep-rust"),
}
SECTION_OF = {subset: section for section, subsets in SECTIONS.items() for subset in subsets}
HUB_DATASET = "allenai/reward-bench"
HUB_SPLIT = "filtered"
REQUIRED = ("prompt", "chosen", "rejected")


@dataclass(frozen=True)
class Pair:
    """One preference pair: the response humans preferred (`chosen`) and the other one."""

    id: str
    prompt: str
    chosen: str
    rejected: str
    category: str
    subset: str | None

    @property
    def doc_hash(self) -> str:
        """Pairs are the same question in two runs only when prompt and both responses are."""
        text = json.dumps([self.prompt, self.chosen, self.rejected], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def category_slug(name: str) -> str:
    """`Chat Hard` -> `chat_hard`: a category as a task-name suffix."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_") or "default"


def _category(record: dict[str, Any]) -> str:
    if isinstance(record.get("category"), str) and record["category"]:
        return category_slug(record["category"])
    subset = record.get("subset")
    if isinstance(subset, str) and subset in SECTION_OF:
        return SECTION_OF[subset]
    return category_slug(subset) if isinstance(subset, str) and subset else "default"


def _records(file: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) of a JSONL file, or of a JSON list."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the preference pairs: {exc}", file=file) from None
    if file.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno) from None
        if not isinstance(data, list):
            raise InputError("expected a JSON list of pairs", file=file, fix="write one object per pair with "
                             "prompt, chosen, rejected (and subset or category, id)")
        return [(0, r) for r in data]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=file, line=number, column=exc.colno) from None
    return out


def pairs_from_records(rows: list[tuple[int, dict[str, Any]]], where: str | Path,
                       categories: list[str] | None = None) -> list[Pair]:
    """Checked pairs; a record without a prompt or a response is one clear error naming its line."""
    pairs: list[Pair] = []
    seen: set[str] = set()
    for index, (line, record) in enumerate(rows):
        if not isinstance(record, dict):
            raise InputError("a pair must be a JSON object", file=where, line=line or None,
                             fix='write one object per line: {"id", "prompt", "chosen", "rejected", "subset"}')
        missing = [k for k in REQUIRED if not isinstance(record.get(k), str)]
        if missing:
            raise InputError(f"pair {record.get('id', index)!r} has no text field {', '.join(missing)}", file=where,
                             line=line or None, fix="give prompt, chosen and rejected as strings (RewardBench's "
                             "format)")
        pair_id = str(record.get("id", index))
        if pair_id in seen:
            raise InputError(f"pair id {pair_id!r} appears twice", file=where, line=line or None,
                             fix="give every pair its own id (pairs are matched across runs by id)")
        seen.add(pair_id)
        subset = record.get("subset") if isinstance(record.get("subset"), str) else None
        pairs.append(Pair(pair_id, record["prompt"], record["chosen"], record["rejected"], _category(record), subset))
    if categories:
        wanted = {category_slug(c) for c in categories}
        pairs = [p for p in pairs if p.category in wanted]
    if not pairs:
        raise InputError("no preference pairs" + (f" in categories {', '.join(categories)}" if categories else ""),
                         file=where, fix="give a file of pairs (prompt, chosen, rejected, subset or category)")
    return pairs


def load_pairs(data_files: str | dict[str, str] | None, categories: list[str] | None = None) -> tuple[list[Pair], str]:
    """(pairs, what they are): the local file the suite names (its name and content hash), else RewardBench from
    the hub."""
    if isinstance(data_files, dict):
        data_files = data_files.get("test") or next(iter(data_files.values()))
    if data_files:
        file = Path(data_files)
        pairs = pairs_from_records(_records(file), file, categories)
        digest = hashlib.sha256(file.read_bytes()).hexdigest()[:12]
        return pairs, f"{file.name}@sha256:{digest}"  # the same data under any folder: runs stay comparable
    return pairs_from_records(_hub_records(), HUB_DATASET, categories), f"{HUB_DATASET}:{HUB_SPLIT}"


def _hub_records() -> list[tuple[int, dict[str, Any]]]:
    offline = [k for k in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE") if os.environ.get(k, "") not in ("", "0")]
    fix = "download the pairs once (allenai/reward-bench, split filtered) and give them as data_files: pairs.jsonl"
    if offline:
        raise InputError(f"{' and '.join(offline)} is set, so {HUB_DATASET} cannot be downloaded",
                         field="suites.tasks.data_files", fix=fix)
    try:
        import datasets
    except ImportError:
        raise InputError("loading RewardBench from the hub needs the `datasets` package",
                         field="suites.tasks.data_files", fix="pip install datasets, or " + fix) from None
    try:
        rows = datasets.load_dataset(HUB_DATASET, split=HUB_SPLIT)
    except Exception as exc:  # network, auth, a changed dataset: the fix is the same
        raise InputError(f"cannot load {HUB_DATASET}: {type(exc).__name__}: {exc}", field="suites.tasks.data_files",
                         fix=fix) from None
    return [(0, dict(row)) for row in rows]
