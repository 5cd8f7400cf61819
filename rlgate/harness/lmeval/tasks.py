"""Load exactly the lm-eval tasks a contract's suites name, pointed at local data where asked.

Indexing all of lm-eval's built-in tasks costs ~13 s, so rlgate builds a `TaskManager` with
`include_defaults=False` over only the task folders the suites need (found by name, or by a quick
text scan of lm-eval's task YAML files when the folder name differs).

Per-task settings (local `data_files`, few-shot count, the protocol's generation kwargs, samples
per prompt) are written into each leaf task's config in the manager's index before the tasks are
built, so a group such as `mmlu_pro` builds its fourteen subtasks on the local file and nothing
asks the Hugging Face Hub for a dataset the user gave locally.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lm_eval.tasks
from lm_eval.api.group import Group
from lm_eval.api.task import Task
from lm_eval.tasks import TaskManager
from lm_eval.tasks._index import Entry, Kind
from lm_eval.tasks._yaml_loader import load_yaml

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask
from rlgate.contract.models import Protocol
from rlgate.harness.lmeval import code_tasks
from rlgate.harness.lmeval.backends import canonical_json, generation_kwargs
from rlgate.harness.lmeval.images import check_images, load_images, select_mmmu_subject
from rlgate.harness.lmeval.nltk_data import ensure_punkt_tab, seed_langdetect
from rlgate.store.cache import GenerationCache

log = logging.getLogger(__name__)
TASKS_DIR = Path(lm_eval.tasks.__file__).parent
#: lm-eval tasks rlgate ships itself (MathVista testmini); found after lm-eval's own
RLGATE_TASKS_DIR = Path(__file__).parent / "task_files"
_NAME_LINE = re.compile(r"^(?:task|group|tag):\s*['\"]?([\w.\-]+)['\"]?\s*$", re.M)


@dataclass
class LoadedSuite:
    """Built lm-eval tasks and what rlgate records about each leaf task."""

    manager: TaskManager
    top: list[Task | Group]
    leaves: dict[str, Task]
    groups: dict[str, list[str]]
    suite_task: dict[str, str] = field(default_factory=dict)  # leaf -> the suite entry naming it
    task_hash: dict[str, str] = field(default_factory=dict)
    version: dict[str, str | None] = field(default_factory=dict)
    dataset: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[int]] = field(default_factory=dict)


# --------------------------------------------------------------------------- finding task folders
@functools.lru_cache(maxsize=1)
def _name_scan() -> dict[str, Path]:
    """task/group/tag name -> top-level lm-eval task folder, by a text scan of the YAML files (~0.6 s)."""
    names: dict[str, Path] = {}
    for root in (TASKS_DIR, RLGATE_TASKS_DIR):
        for path in sorted(root.rglob("*.yaml")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            top = root / path.relative_to(root).parts[0]
            for match in _NAME_LINE.finditer(text):
                names.setdefault(match.group(1), top)
    return names


def _folder_for(name: str) -> Path | None:
    direct = TASKS_DIR / name
    if direct.is_dir():
        return direct
    return _name_scan().get(name)


def _unknown_task(name: str) -> InputError:
    close = difflib.get_close_matches(name, list(_name_scan()), n=1)
    fix = f"did you mean '{close[0]}'?" if close else "list lm-eval's tasks with `lm_eval ls tasks`"
    return InputError(f"lm-eval has no task or group named '{name}'", field="suites.tasks", fix=fix)


def build_manager(tasks: list[ResolvedTask]) -> TaskManager:
    """A TaskManager over only the folders the suite tasks live in (all of lm-eval as a last resort)."""
    paths: list[Path] = []
    for task in tasks:
        if task.path is not None:
            folder = task.path if task.path.is_dir() else task.path.parent
        else:
            found = _folder_for(task.name)
            if found is None:
                raise _unknown_task(task.name)
            folder = found
        if folder not in paths:
            paths.append(folder)
    manager = TaskManager(include_defaults=False, include_path=[str(p) for p in paths])
    members = [m for t in tasks for m in _members(manager, t.name) if m not in manager.task_index]
    extra = [f for f in dict.fromkeys(_folder_for(m) for m in members) if f is not None and f not in paths]
    if extra:  # a group rlgate ships (aime24_25) over lm-eval's own tasks: index their folders too
        paths.extend(extra)
        manager = TaskManager(include_defaults=False, include_path=[str(p) for p in paths])
    if all(t.name in manager.task_index for t in tasks):
        return manager
    log.info("a suite task is defined outside its folder; indexing all of lm-eval's tasks")
    local = [str(t.path if t.path.is_dir() else t.path.parent) for t in tasks if t.path is not None]
    return TaskManager(include_defaults=True, include_path=local or None)


def _members(manager: TaskManager, name: str) -> list[str]:
    """The task names a group lists (none for a task or an unknown name)."""
    entry = manager.task_index.get(name)
    if entry is None or entry.kind in (Kind.TASK, Kind.PY_TASK, Kind.TAG):
        return []
    cfg = entry.cfg or (load_yaml(entry.yaml_path, resolve_func=False) if entry.yaml_path else {})
    listed = cfg.get("task") or []
    names = [m if isinstance(m, str) else m.get("task") or m.get("group") for m in
             (listed if isinstance(listed, list) else [listed])]
    return [n for n in names if isinstance(n, str)]


# --------------------------------------------------------------------------- leaf expansion
def _leaves(manager: TaskManager, name: str, seen: set[str] | None = None) -> list[str]:
    """Leaf task names behind a task, group or tag, read from the index without building anything."""
    seen = seen if seen is not None else set()
    if name in seen:
        return []
    seen.add(name)
    entry = manager.task_index.get(name)
    if entry is None:
        return []
    if entry.kind in (Kind.TASK, Kind.PY_TASK):
        return [name]
    if entry.kind == Kind.TAG:
        return sorted(entry.tags)
    cfg = entry.cfg or (load_yaml(entry.yaml_path, resolve_func=False) if entry.yaml_path else {})
    members = cfg.get("task") or []
    out: list[str] = []
    for member in members if isinstance(members, list) else [members]:
        child = member if isinstance(member, str) else member.get("task") or member.get("group")
        if isinstance(child, str):
            out.extend(_leaves(manager, child, seen))
    return out


# --------------------------------------------------------------------------- config rewriting
def _effective_fewshot(entry_shots: int | None, protocol: Protocol, task_default: int | None) -> int:
    """Suite entry > protocol (except tasks fixed at 0-shot, as lm-eval does) > the task's default."""
    if entry_shots is not None:
        return entry_shots
    if protocol.num_fewshot is not None and task_default != 0:
        return protocol.num_fewshot
    return task_default or 0


def _leaf_files(task: ResolvedTask, leaf: str) -> str | dict[str, str] | None:
    """A group's data_files keyed `leaf/split` (aime24_25: {aime24/train: .., aime25/test: ..}): this leaf's."""
    given = task.data_files
    if not isinstance(given, dict) or not any("/" in key for key in given):
        return given
    own = {key.split("/", 1)[1]: path for key, path in given.items() if key.split("/", 1)[0] == leaf}
    if not own:
        raise InputError(f"task '{task.name}': data_files names no file of its leaf '{leaf}'",
                         field=f"suites.tasks[{task.name}].data_files",
                         fix=f"add {leaf}/<split>: <file> (keys of a group's data_files are leaf/split)")
    return own


def _data_files(task: ResolvedTask, cfg: dict[str, Any], shots: int, leaf: str) -> dict[str, str]:
    test_split = cfg.get("test_split") or cfg.get("validation_split") or "test"
    given = _leaf_files(task, leaf)
    files = {test_split: given} if isinstance(given, str) else dict(given or {})
    needed = {test_split}
    fewshot_split = cfg.get("fewshot_split") or cfg.get("training_split") or cfg.get("validation_split")
    if shots > 0 and fewshot_split:
        needed.add(fewshot_split)
    missing = sorted(needed - set(files))
    if missing:
        shown = ", ".join(f"{s}: <file>" for s in missing)
        why = (f"its {shots}-shot prompts take examples from split '{fewshot_split}'"
               if fewshot_split in missing and fewshot_split != test_split else f"it evaluates split '{test_split}'")
        fix = f"write data_files as a mapping {{{shown}, ...}}"
        if fewshot_split in missing:
            fix += f", or set num_fewshot: 0 on the {task.name} entry"
        raise InputError(f"task '{task.name}': data_files has no '{missing[0]}' split, and {why}",
                         field=f"suites.tasks[{task.name}].data_files", fix=fix)
    return files


def _local_images(cfg: dict[str, Any], files: dict[str, str], protocol: Protocol, decode: bool) -> None:
    """Point an image task's doc_to_image at image files beside the local data (see images.py)."""
    test_split = cfg.get("test_split") or cfg.get("validation_split") or "test"
    base = str(Path(files.get(test_split) or next(iter(files.values()))).parent)
    cfg["doc_to_image"] = functools.partial(load_images, cfg["doc_to_image"], base,
                                            protocol.image.model_dump(), decode)
    subject = cfg.get("dataset_name")
    if subject and str(cfg.get("task", "")).startswith("mmmu_val_") and not cfg.get("process_docs"):
        cfg["process_docs"] = functools.partial(select_mmmu_subject, subject)


def _rewrite_leaf(manager: TaskManager, leaf: str, task: ResolvedTask, protocol: Protocol,
                  decode_images: bool = True) -> dict[str, Any]:
    entry = manager.task_index[leaf]
    if entry.kind == Kind.PY_TASK:
        if task.data_files:
            raise InputError(f"task '{leaf}' is a Python task; data_files only applies to YAML tasks",
                             field=f"suites.tasks[{task.name}].data_files", fix="remove data_files for this task")
        return {}
    cfg = dict(entry.cfg) if entry.yaml_path is None and entry.cfg else load_yaml(entry.yaml_path, resolve_func=True)
    shots = _effective_fewshot(task.entry.num_fewshot, protocol, cfg.get("num_fewshot"))
    cfg["num_fewshot"] = shots
    if task.data_files:
        files = _data_files(task, cfg, shots, leaf)
        if cfg.get("doc_to_image") is not None:
            _local_images(cfg, files, protocol, decode_images)
        parquet = all(str(f).endswith(".parquet") for f in files.values())
        cfg["dataset_path"] = "parquet" if parquet else "json"
        cfg["dataset_name"] = None
        cfg["dataset_kwargs"] = {"data_files": files}
        if shots == 0:
            for key in ("fewshot_split", "training_split", "validation_split"):
                if cfg.get(key) not in (None, *files):
                    cfg[key] = None
    if cfg.get("output_type") == "generate_until":
        cfg["generation_kwargs"] = generation_kwargs(protocol, cfg.get("generation_kwargs"))
        if protocol.sampling.n > 1:
            cfg["repeats"] = protocol.sampling.n
    manager.task_index[leaf] = Entry(name=leaf, kind=entry.kind, yaml_path=None, cfg=cfg, tags=set(entry.tags))
    return cfg


# --------------------------------------------------------------------------- hashing
def _stable(value: Any) -> Any:
    """A JSON-able, address-free view of a task config (functions by module, name and source hash)."""
    if isinstance(value, functools.partial) and value.func is load_images:
        # the image protocol is in the protocol hash and the pixels in every request hash; the
        # folder and whether images are decoded (live vs imported) must not split task identity
        return {"local_images": _stable(value.args[0])}
    if isinstance(value, functools.partial):
        return {"partial": _stable(value.func), "args": _stable(list(value.args)),
                "kwargs": _stable(dict(value.keywords))}
    if callable(value):
        try:
            source = hashlib.sha256(inspect.getsource(value).encode()).hexdigest()[:16]
        except (OSError, TypeError):
            source = ""
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}#{source}"
    if isinstance(value, dict):
        return {str(k): _stable(v) for k, v in value.items() if k != "metadata" or not isinstance(v, dict)}
    if isinstance(value, (list, tuple, set)):
        items = [_stable(v) for v in value]
        return sorted(items, key=canonical_json) if isinstance(value, set) else items
    return value


def _dataset_identity(cfg: dict[str, Any], digests: GenerationCache | None) -> tuple[str, str]:
    """(description, hash) of the data a task reads: file contents for local data, path/name/revision else."""
    kwargs = cfg.get("dataset_kwargs") or {}
    files = kwargs.get("data_files") if cfg.get("dataset_path") in ("json", "parquet") else None
    if isinstance(files, dict):
        parts = []
        for split, path in sorted(files.items()):
            file = Path(path)
            stat = file.stat()
            digest = digests.file_digest(file.resolve(), stat) if digests else None
            if digest is None:
                digest = hashlib.sha256(file.read_bytes()).hexdigest()
                if digests:
                    digests.remember_digest(file.resolve(), stat, digest)
            parts.append(f"{split}={digest}")
        desc = ", ".join(f"{s}: {p}" for s, p in sorted(files.items()))
        return desc, hashlib.sha256("\n".join(parts).encode()).hexdigest()
    desc = "/".join(str(x) for x in (cfg.get("dataset_path"), cfg.get("dataset_name")) if x)
    revision = kwargs.get("revision", "")
    return desc + (f"@{revision}" if revision else ""), hashlib.sha256(f"{desc}@{revision}".encode()).hexdigest()


def task_hash(cfg: dict[str, Any], data_hash: str) -> str:
    cleaned = {k: v for k, v in cfg.items() if k not in ("metadata", "tag", "task_alias", "group_alias")}
    version = (cfg.get("metadata") or {}).get("version") if isinstance(cfg.get("metadata"), dict) else None
    text = canonical_json({"config": _stable(cleaned), "version": version, "data": data_hash})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- entry point
def _load_one(manager: TaskManager, name: str) -> tuple[list[Task | Group], dict[str, Task], dict[str, list[str]]]:
    try:
        loaded = manager.load([name])
    except InputError:
        raise
    except Exception as exc:  # dataset download / parse failures surface here
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise InputError(f"lm-eval could not load task '{name}' ({text})", field=f"suites.tasks[{name}]",
                         fix="point the task at local data with data_files: in the suite, or allow Hugging Face "
                             "downloads (unset HF_DATASETS_OFFLINE / HF_HUB_OFFLINE)") from None
    groups = loaded.get("groups", {})
    tasks = loaded["tasks"]
    top: list[Task | Group] = [groups[name]] if name in groups else list(tasks.values())
    return top, dict(tasks), dict(loaded.get("group_map", {}))


def _check_local_images(suite: LoadedSuite, configs: dict[str, tuple[ResolvedTask, dict[str, Any]]]) -> None:
    """Every image of local data exists and decodes (checked once per data file, before model time)."""
    done: set[tuple[str, str]] = set()
    for leaf, obj in suite.leaves.items():
        owner, cfg = configs.get(leaf, (None, {}))
        loader = cfg.get("doc_to_image") if cfg else None
        if owner is None or not isinstance(loader, functools.partial) or loader.func is not load_images:
            continue
        files = (cfg.get("dataset_kwargs") or {}).get("data_files") or {}
        data_file = str(next(iter(files.values()), ""))
        key = (data_file, leaf if cfg.get("process_docs") else "")
        if key in done:
            continue
        done.add(key)
        docs = obj.eval_docs
        picked = suite.samples.get(leaf)
        rows = (docs[i] for i in picked) if picked is not None else iter(docs)
        check_images(leaf, loader.args[0], rows, Path(loader.args[1]), data_file,
                     f"suites.tasks[{owner.name}].data_files")


def load_suite(tasks: list[ResolvedTask], protocol: Protocol, digests: GenerationCache | None = None,
               limit: int | None = None, decode_images: bool = True) -> LoadedSuite:
    """Build every suite task with rlgate's per-task settings applied; datasets are loaded here.

    Images of local image tasks are checked here (exist, decode) and, for imported responses
    (`decode_images=False`), passed on as references only.
    """
    if any("ifeval" in t.name or t.path is not None for t in tasks):
        ensure_punkt_tab()
        seed_langdetect()
    manager = build_manager(tasks)
    configs: dict[str, tuple[ResolvedTask, dict[str, Any]]] = {}
    for task in tasks:
        if task.name not in manager.task_index:
            raise _unknown_task(task.name)
        leaves = _leaves(manager, task.name)
        if not leaves:
            raise InputError(f"'{task.name}' names no lm-eval task with documents", field="suites.tasks",
                             fix="check the task or group name")
        for leaf in leaves:
            if task.path is None:
                code_tasks.install(leaf)  # before lm-eval imports the task's module: code runs in the sandbox
            configs[leaf] = (task, _rewrite_leaf(manager, leaf, task, protocol, decode_images))
    suite = LoadedSuite(manager, [], {}, {})
    for task in tasks:
        top, built, group_map = _load_one(manager, task.name)
        suite.top.extend(top)
        suite.groups.update(group_map)
        for leaf, obj in built.items():
            suite.leaves[leaf] = obj
            suite.suite_task[leaf] = task.name
    for leaf, obj in suite.leaves.items():
        owner, cfg = configs.get(leaf, (None, {}))
        desc, data_hash = _dataset_identity(cfg or obj.dump_config(), digests)
        suite.dataset[leaf] = desc
        suite.task_hash[leaf] = task_hash(cfg or obj.dump_config(), data_hash)
        suite.version[leaf] = str(obj.VERSION) if getattr(obj, "VERSION", None) is not None else None
        entry_limit = owner.entry.limit if owner is not None else None
        cap = min(x for x in (entry_limit, limit) if x is not None) if (entry_limit or limit) else None
        if cap is not None:
            total = len(obj.eval_docs)
            suite.samples[leaf] = list(range(min(cap, total)))
    _check_local_images(suite, configs)
    return suite
