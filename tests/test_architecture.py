"""The layers stay layered: every module imports, and no package imports one above it or closes a cycle.

contract -> harness/results -> engine -> {badcases, contamination, monitor, judge, report} -> app
-> cli -> ci, with the ground floor (rlgate._core: errors, files, JSON I/O, text safety) and the registry
below everything. Imports inside functions (lazy imports) count:
they are dependencies all the same.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

import rlgate

PACKAGE = Path(rlgate.__file__).parent

#: package (first name under rlgate) -> layer; a package may import its own layer's siblings or lower ones.
LAYERS: dict[str, int] = {
    "rlgate": 0, "_core": 0, "registry": 0, "stats": 0, "sandbox": 0,
    "contract": 1,
    "store": 2, "results": 2,
    "harness": 3,
    "engine": 4,
    "badcases": 5, "contamination": 5, "monitor": 5, "judge": 5, "report": 5,
    "app": 6, "scaffold": 6, "demo": 7, "watch": 7,
    "cli": 8,
    "ci": 9,
}
#: modules that need an optional extra (lm-eval, torch, deepeval, ...) to import
OPTIONAL = ("rlgate.harness.lmeval.runner", "rlgate.harness.lmeval.caching_lm", "rlgate.harness.lmeval.output",
            "rlgate.harness.lmeval.replay", "rlgate.harness.lmeval.tasks", "rlgate.judge.llms",
            "rlgate.judge.geval", "rlgate.judge.deepeval_api", "rlgate.demo.model",
            "rlgate.monitor.readers.tensorboard", "rlgate.harness.inspect.log", "rlgate.harness.inspect.runner",
            "rlgate.harness.inspect.toolbox.task", "rlgate.harness.inspect.toolbox.policies")


def _modules() -> list[tuple[str, Path]]:
    out = []
    for file in sorted(PACKAGE.rglob("*.py")):
        parts = list(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), file))
    return out


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rlgate"


def _imports(file: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "rlgate" or name.startswith("rlgate.")}


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, file in _modules():
        for target in _imports(file):
            if _package(target) != _package(module):
                graph[_package(module)].add(_package(target))
    return graph


@pytest.mark.parametrize("module", [m for m, _ in _modules()])
def test_every_module_imports(module: str) -> None:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if module in OPTIONAL and exc.name and not exc.name.startswith("rlgate"):
            pytest.skip(f"{module} needs the optional package {exc.name}")
        raise


def test_every_package_has_a_layer() -> None:
    unknown = sorted({_package(m) for m, _ in _modules()} - set(LAYERS))
    assert not unknown, f"give these packages a layer in LAYERS: {unknown}"


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{src} -> {dst}" for src, dsts in graph.items() for dst in dsts if LAYERS[dst] > LAYERS[src])


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Package cycles: Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_package_imports_a_layer_above_it() -> None:
    upward = _upward(_package_graph())
    assert not upward, f"imports against the layer order: {upward}"


def test_no_package_level_cycle() -> None:
    cycles = _cycles(_package_graph())
    assert not cycles, f"package import cycles: {cycles}"


def test_module_cycles_named_in_the_redesign_stay_broken() -> None:
    modules = dict(_modules())
    assert "rlgate.badcases.classify" not in _imports(modules["rlgate.badcases.families"])
    assert "rlgate.badcases.families" not in _imports(modules["rlgate.badcases.taxonomy"])
    assert not any(name.startswith("rlgate.judge") for name in _imports(PACKAGE / "contract" / "models.py"))
    assert not any(_package(name) == "ci" for m, f in _modules() if _package(m) == "cli" for name in _imports(f))


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    """The layer and cycle tests are not vacuous: a lazy engine -> report import is seen and both fire."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from rlgate.report.model import ReportModel\n")
    assert "rlgate.report.model" in _imports(bad)
    graph = {name: set(targets) for name, targets in _package_graph().items()}
    graph.setdefault("engine", set()).add(_package("rlgate.report.model"))
    assert "engine -> report" in _upward(graph)
    assert any({"engine", "report"} <= set(cycle) for cycle in _cycles(graph))


def _manifest_dict_reads(source: str, in_harness: bool = False) -> list[str]:
    """Reads of a run manifest by string key (`manifest["tasks"]`, `manifest.get("seed")`, `x.manifest or {}`):
    the manifest is a typed model (rlgate.results.manifest.RunManifest) and is read by field. A harness may read
    the harness-specific spec it wrote itself (`manifest.model_spec`)."""

    def names_manifest(node: ast.expr) -> bool:
        text = ast.unparse(node)
        return bool(re.search(r"manifest\b", text, re.IGNORECASE)) and not (in_harness and text.endswith(".model_spec"))

    def keyed(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript):
            return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                and names_manifest(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            return bool(node.args) and isinstance(node.args[0], ast.Constant) and names_manifest(node.func.value)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return isinstance(node.values[-1], ast.Dict) and any(names_manifest(v) for v in node.values[:-1])
        return False

    found = [ast.unparse(node) for node in ast.walk(ast.parse(source)) if keyed(node)]
    return found


def test_no_dict_reads_of_the_run_manifest_outside_results() -> None:
    from rlgate.results.manifest import RunManifest
    from rlgate.results.models import RunProvenance

    assert RunProvenance.model_fields["manifest"].annotation == RunManifest | None
    reads = {module: found for module, file in _modules() if _package(module) != "results"
             for found in [_manifest_dict_reads(file.read_text(encoding="utf-8"), _package(module) == "harness")]
             if found}
    assert reads == {}


def test_the_manifest_check_catches_a_dict_read() -> None:
    bad = ("a = run.provenance.manifest or {}\nb = manifest.get('seed')\nc = run.provenance.manifest['tasks']\n"
           "ok = manifest.tasks[0].documents\nok = manifests['baseline']\nspec = manifest.model_spec.get('x')\n")
    assert _manifest_dict_reads(bad) == ["run.provenance.manifest or {}", "manifest.get('seed')",
                                         "run.provenance.manifest['tasks']", "manifest.model_spec.get('x')"]
    assert "manifest.model_spec.get('x')" not in _manifest_dict_reads(bad, in_harness=True)


#: lm-eval's task catalog: only its adapter reads it; everyone else asks the task's harness (`vocabulary`)
CATALOG_MODULE = "rlgate.harness.lmeval.catalog"
CATALOG_NAMES = frozenset({"KNOWN_TASK_METRICS", "DEFAULT_FILTER", "catalog_task"})
HARNESS_NAMES = frozenset({"lm_eval", "inspect", "bfcl", "swebench", "reward"})


def _catalog_imports(file: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == CATALOG_MODULE or (node.module.startswith("rlgate")
                                                  and {a.name for a in node.names} & CATALOG_NAMES):
                found.append(f"{file.name}:{node.lineno}")
        elif isinstance(node, ast.Import) and any(a.name == CATALOG_MODULE for a in node.names):
            found.append(f"{file.name}:{node.lineno}")
    return found


def _harness_name_conditionals(file: Path) -> list[str]:
    """Comparisons of something named *harness* with a harness's name (`task.harness == "inspect"`)."""
    found = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        texts = [ast.unparse(side) for side in sides]
        constants = {c.value for side in sides for c in ast.walk(side)
                     if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        if constants & HARNESS_NAMES and any("harness" in text for text in texts):
            found.append(f"{file.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def _outside(folder: str) -> list[Path]:
    inside = PACKAGE / folder
    return [f for _, f in _modules() if inside not in f.parents]


def test_no_catalog_import_outside_the_lm_eval_adapter() -> None:
    found = [hit for file in _outside("harness/lmeval") for hit in _catalog_imports(file)]
    assert not found, f"ask the task's harness (Harness.vocabulary / rlgate.harness.vocabulary) instead: {found}"


def test_no_harness_name_conditionals_outside_the_harness_package() -> None:
    found = [hit for file in _outside("harness") for hit in _harness_name_conditionals(file)]
    assert not found, f"declare a capability on rlgate.harness.Harness instead of naming the harness: {found}"


def test_the_engine_names_no_harness_in_its_hints() -> None:
    texts = [node.value for _, file in _modules() if _package(_module_of(file)) == "engine"
             for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert not [t for t in texts if "log_samples" in t or "lm_eval" in t]


def _module_of(file: Path) -> str:
    return ".".join(file.relative_to(PACKAGE.parent).with_suffix("").parts)


def test_the_vocabulary_checks_are_not_vacuous(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from rlgate.harness.lmeval.catalog import catalog_task\n"
                   "from rlgate.contract.metrics import DEFAULT_FILTER\n"
                   "def f(task):\n    return task.harness == 'inspect' or task.harness in ('bfcl',)\n")
    assert len(_catalog_imports(bad)) == 2
    assert len(_harness_name_conditionals(bad)) == 2


def test_only_the_harness_layer_and_the_demo_reach_into_an_adapter() -> None:
    """Badcases, judge, reports ... ask the port (rlgate.harness.vocabulary), never an adapter's modules."""
    found = [f"{module} -> {name}" for module, file in _modules() if _package(module) not in ("harness", "demo")
             for name in _imports(file) if name.startswith(("rlgate.harness.lmeval", "rlgate.harness.inspect",
                                                            "rlgate.harness.bfcl", "rlgate.harness.swebench"))]
    assert not found, found


#: the spellings of each contract gate kind: its verdict kind and its GateConfig field
GATE_KIND_SPELLINGS = {"primary": {"primary"}, "hard": {"hard"}, "regression": {"regression"},
                       "diagnostic": {"diagnostic", "diagnostics"}}
GATE_KINDS_TABLE = PACKAGE / "contract" / "gatekinds.py"


def _gate_kind_lists(source: str) -> list[str]:
    """Statements that spell every contract gate kind by hand (`("primary", "hard", "regression", ...)`,
    `[gates.primary, *gates.hard, *gates.regression, *gates.diagnostics]`): each would need a new kind added to it.
    A statement's own body is not counted with it (an `if` is judged by its test, a class by its statements); a
    contract written out as data (gates with a `metric`) is not a list of the kinds."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, (ast.If, ast.While)):
            parts: list[ast.AST] = [node.test]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            parts = [node.target, node.iter]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            parts = list(node.items)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try, ast.Match)):
            continue
        else:
            parts = [node]
        if any(isinstance(sub, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "metric" for k in sub.keys)
               for part in parts for sub in ast.walk(part)):
            continue  # a contract written out as data (the demo's): its gates, not a list of the kinds
        words = {sub.value for part in parts for sub in ast.walk(part)
                 if isinstance(sub, ast.Constant) and isinstance(sub.value, str)}
        words |= {sub.attr for part in parts for sub in ast.walk(part) if isinstance(sub, ast.Attribute)}
        words |= {kw.arg for part in parts for sub in ast.walk(part) if isinstance(sub, ast.Call)
                  for kw in sub.keywords if kw.arg}
        if all(words & spelled for spelled in GATE_KIND_SPELLINGS.values()):
            found.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0][:100]}")
    return found


def test_the_gate_kinds_are_listed_once() -> None:
    """A new gate kind is one entry in rlgate.contract.gatekinds (beside its model, field and evaluator): no other
    module spells the list of kinds, and the table, the models' fields and decision.json's kinds agree."""
    from rlgate.contract.gatekinds import GATE_KINDS, VERDICT_KINDS
    from rlgate.contract.models import GateConfig, GateSettings
    from rlgate.engine.models import GateVerdict

    spelled = {module: hits for module, file in _modules() if file != GATE_KINDS_TABLE
               for hits in [_gate_kind_lists(file.read_text(encoding="utf-8"))] if hits}
    assert spelled == {}, "derive these from rlgate.contract.gatekinds (GATE_KINDS, GateConfig.listed, keeping)"
    assert _gate_kind_lists(GATE_KINDS_TABLE.read_text(encoding="utf-8"))  # the table itself is seen by the check
    assert {spec.kind for spec in GATE_KINDS} == set(GATE_KIND_SPELLINGS)
    for model in (GateConfig, GateSettings):
        gate_fields = [name for name, info in model.model_fields.items() if "Gate" in str(info.annotation)
                       and "GateConfig" not in str(info.annotation)]
        assert gate_fields == [spec.field for spec in GATE_KINDS], model.__name__
    assert GateVerdict.model_json_schema()["properties"]["kind"]["enum"] == list(VERDICT_KINDS)


def test_the_gate_kind_check_is_not_vacuous() -> None:
    bad = ("ORDER = ('primary', 'hard', 'regression', 'diagnostic')\n"
           "gates = [g.primary, *g.hard, *g.regression, *g.diagnostics]\n"
           "copy = g.model_copy(update={'primary': None, 'hard': [], 'regression': [], 'diagnostics': []})\n"
           "if kind in ('primary', 'regression'):\n    x = ('hard', 'diagnostic')\n"
           "ok = [('hard', 1), ('regression', 2)]\n"
           "doc = {'primary': {'metric': 'a'}, 'hard': [], 'regression': [], 'diagnostics': []}\n")
    assert [hit.split(":")[0] for hit in _gate_kind_lists(bad)] == ["line 1", "line 2", "line 3"]


#: commands whose use case lives in rlgate.app: they parse arguments, call it and print what it returns
APP_COMMANDS = ("check_cmd", "gate_cmd", "contamination_cmd", "monitor_cmd")
#: what such a command may import besides rlgate.app and the CLI's own modules: errors, text safety, the
#: process's collector policy, and the table / line renderers of what the use case returned
PRESENTATION = ("rlgate._core.errors", "rlgate._core.text", "rlgate._core.gcpause", "rlgate.engine.summary",
                "rlgate.engine.sequential", "rlgate.monitor.mapping", "rlgate.monitor.duplicates",
                "rlgate.monitor.report")


def test_the_use_case_commands_only_parse_and_call_the_application_layer() -> None:
    found = [f"{name} -> {target}" for name in APP_COMMANDS
             for target in _imports(PACKAGE / "cli" / f"{name}.py")
             if not target.startswith(("rlgate.app", "rlgate.cli")) and target not in PRESENTATION]
    assert not found, f"move the work into rlgate.app: {found}"


#: the only modules directly under rlgate/: everything else lives in a package (a floor)
ROOT_MODULES = frozenset({"__init__", "registry"})


def test_no_loose_modules_at_the_root() -> None:
    loose = sorted(f.stem for f in PACKAGE.glob("*.py"))
    assert not set(loose) - ROOT_MODULES, \
        f"put these in a package (rlgate/_core for errors, files, JSON I/O and text safety): {loose}"


def test_the_ground_floor_imports_no_other_rlgate_package() -> None:
    found = [f"{module} -> {name}" for module, file in _modules() if _package(module) == "_core"
             for name in _imports(file) if _package(name) != "_core"]
    assert not found, found


def _defined_functions(file: Path) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _floor_helpers() -> set[str]:
    """The public functions of the floor's text-safety and JSON I/O modules."""
    return {name for module in ("text", "jsonio") for name in _defined_functions(PACKAGE / "_core" / f"{module}.py")
            if not name.startswith("_")}


#: function names that make untrusted text safe, wherever they are written (`escape_data`, `visible_...`)
_TEXT_SAFETY_NAME = re.compile(r"^(visible_(controls|line|text|surrogates)|escape_|sanitize|safe_text|make_safe)")


def _own_text_safety_or_json_io(file: Path, helpers: set[str]) -> list[str]:
    return sorted(name for name in _defined_functions(file) if name in helpers or _TEXT_SAFETY_NAME.match(name))


def test_only_the_ground_floor_makes_text_safe_or_reads_json() -> None:
    """One text-safety module and one JSON I/O module (rlgate._core.text / jsonio): no package writes its own
    escaping or a second copy of a reader helper."""
    helpers = _floor_helpers()
    assert {"visible_controls", "visible_surrogates", "stored_text", "md_inline", "workflow_data", "check_depth",
            "iter_jsonl", "load_document"} <= helpers
    found = {module: hits for module, file in _modules() if _package(module) != "_core"
             for hits in [_own_text_safety_or_json_io(file, helpers)] if hits}
    assert found == {}, f"use rlgate._core.text / rlgate._core.jsonio instead: {found}"


def test_the_floor_checks_are_not_vacuous(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def escape_data(v):\n    return v\n\ndef check_depth(v):\n    return v\n\n"
                   "def visible_controls(v):\n    return v\n\ndef visible_gpu_count():\n    return 0\n")
    assert _own_text_safety_or_json_io(bad, _floor_helpers()) == ["check_depth", "escape_data", "visible_controls"]


def _module_cycles(package: str) -> list[list[str]]:
    """Import cycles between the modules of one package (lazy imports count)."""
    inside = {module: file for module, file in _modules() if _package(module) == package}
    graph: dict[str, set[str]] = {module: {name for name in _imports(file) if name in inside and name != module}
                                  for module, file in inside.items()}
    return _cycles(graph)


def test_no_module_cycle_in_the_store() -> None:
    """rlgate.store.open opens the backends and rlgate.store.postgres is one; both read rlgate.store.location."""
    assert _module_cycles("store") == []


def test_the_module_cycle_check_is_not_vacuous() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
