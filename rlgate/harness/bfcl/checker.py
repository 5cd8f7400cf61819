"""bfcl-eval's own AST checker and shipped ground truth, loaded without its model SDKs.

`bfcl_eval.eval_checker.ast_eval.ast_checker` imports `bfcl_eval.constants.model_config`, which
imports every model handler and with them the SDKs of ~20 vendors (anthropic, cohere==5.18.0,
mistralai==1.7.0, qwen-agent, writer-sdk, google-genai ...) and, through bfcl-eval's requirements,
numpy==1.26.4, which the rlgate environment cannot take. The checker itself reads only two fields of
that mapping: `is_fc_model` (how the runner decodes a result) and `underscore_to_dot` (the model's
API renamed `a.b` to `a_b`). Those are read here from model_config.py's source (`ast`, never
executed) and put in place of the module, so the checker, the decoders and the ground truth are
bfcl-eval's, unchanged, with no API call. rlgate installs bfcl-eval with `--no-deps` plus the three
tree-sitter wheels its decoders import (see .ci/run and the README).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
import tempfile
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError

MODEL_CONFIG = "bfcl_eval.constants.model_config"
INSTALL = ('pip install --no-deps "bfcl-eval==2026.3.23" "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" '
           '"tree-sitter-javascript==0.21.4"  (--no-deps: its own requirements pin numpy==1.26.4 and '
           'every vendor SDK; the checker needs none of them)')
#: BFCL categories scored by the AST checker (single-turn function calls with a ground truth)
AST_CATEGORIES = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
                  "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")


@dataclass(frozen=True)
class ModelFlags:
    """The two ModelConfig fields bfcl-eval's checker and decoders read."""

    is_fc_model: bool = True
    underscore_to_dot: bool = False


def require_bfcl() -> Path:
    """The installed bfcl_eval package folder, or an InputError saying how to install it."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("scoring BFCL result files needs bfcl-eval's checker, which is not installed",
                         fix=INSTALL)
    return Path(next(iter(spec.submodule_search_locations)))


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


@cache
def model_flags() -> dict[str, ModelFlags]:
    """MODEL_CONFIG_MAPPING's keys -> (is_fc_model, underscore_to_dot), read from the source."""
    source = (require_bfcl() / "constants" / "model_config.py").read_text(encoding="utf-8")
    out: dict[str, ModelFlags] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Call)
                    and getattr(value.func, "id", None) == "ModelConfig"):
                given = {k.arg: _literal(k.value) for k in value.keywords if k.arg}
                out[key.value] = ModelFlags(bool(given.get("is_fc_model", True)),
                                            bool(given.get("underscore_to_dot", False)))
    return out


class _Flags(dict[str, ModelFlags]):
    """The mapping the checker indexes; a model bfcl-eval does not list gets the defaults (FC, names kept)."""

    def __missing__(self, key: str) -> ModelFlags:
        return ModelFlags()


def _install_model_config() -> None:
    """Put the flags in place of bfcl_eval.constants.model_config (unless the real one is already loaded)."""
    if MODEL_CONFIG in sys.modules:
        return
    module = types.ModuleType(MODEL_CONFIG)
    module.__doc__ = "rlgate: ModelConfig flags read from bfcl-eval's model_config.py source (no SDK imports)"
    module.MODEL_CONFIG_MAPPING = _Flags(model_flags())  # type: ignore[attr-defined]
    sys.modules[MODEL_CONFIG] = module


@cache
def _modules() -> tuple[Any, Any, Any, Any]:
    """(ast_checker module, model_handler.utils, utils, enums) of bfcl-eval, imported once."""
    require_bfcl()
    # bfcl-eval creates result/score/lock folders under its project root on import; keep them out of site-packages
    os.environ.setdefault("BFCL_PROJECT_ROOT", str(Path(tempfile.gettempdir()) / "rlgate-bfcl"))
    _install_model_config()
    try:
        from bfcl_eval import utils
        from bfcl_eval.constants import enums
        from bfcl_eval.eval_checker.ast_eval import ast_checker
        from bfcl_eval.model_handler import utils as handler_utils
    except ImportError as exc:
        raise InputError(f"bfcl-eval's checker cannot be imported ({exc})", fix=INSTALL) from None
    return ast_checker, handler_utils, utils, enums


def version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return None


@cache
def ground_truth(category: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(id -> prompt entry, id -> possible answers) of a category, from bfcl-eval's shipped data."""
    _, _, utils, _ = _modules()
    prompts = utils.load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False)
    answers = utils.load_ground_truth_entry(category)
    return {p["id"]: p for p in prompts}, {a["id"]: a["ground_truth"] for a in answers}


@cache
def dataset_ids(category: str) -> list[str]:
    """The entry ids of a category in bfcl-eval's shipped data (relevance categories have no answers)."""
    _, _, utils, _ = _modules()
    return [p["id"] for p in utils.load_dataset_entry(category, include_prereq=False,
                                                      include_language_specific_hint=False)]


def listed(model: str) -> ModelFlags | None:
    """The flags bfcl-eval lists for a model (BFCL's result folder name is the registry key with '/' as '_')."""
    known = model_flags()
    return known.get(model) or known.get(model.replace("_", "/"))


def flags(model: str, given: ModelFlags | None = None) -> ModelFlags:
    """The flags to score with: the ones the contract gives, else bfcl-eval's, else the defaults (the
    reader refuses an unlisted model without given flags before it gets here)."""
    return given or listed(model) or ModelFlags()


def _formats(category: str) -> tuple[Any, Any]:
    _, _, _, enums = _modules()
    if category.endswith("java"):
        return enums.Language.JAVA, enums.ReturnFormat.JAVA
    if category.endswith("javascript"):
        return enums.Language.JAVASCRIPT, enums.ReturnFormat.JAVASCRIPT
    return enums.Language.PYTHON, enums.ReturnFormat.PYTHON


def decode(result: Any, category: str, model: str, given: ModelFlags | None = None) -> list[dict[str, Any]]:
    """A raw result as the AST checker's input, the way bfcl-eval's generic handlers decode it: FC models'
    `[{name: "json args"}]` with json.loads (OpenAI-compatible handlers), prompt models' text with
    `default_decode_ast_prompting`. Raises on undecodable output (the runner's `ast_decoder:decoder_failed`)."""
    _, handler_utils, _, _ = _modules()
    if flags(model, given).is_fc_model and isinstance(result, list):
        out = []
        for call in result:
            name = next(iter(call))
            args = call[name]
            out.append({name: json.loads(args) if isinstance(args, str) else args})
        return out
    if not isinstance(result, str):
        raise ValueError(f"a prompt-mode result is text, not {type(result).__name__}")
    return list(handler_utils.default_decode_ast_prompting(result, _formats(category)[1], False))


def check(result: Any, category: str, sample_id: str, model: str,
          given: ModelFlags | None = None) -> tuple[bool, list[dict[str, Any]] | None, str, str | None]:
    """(valid, decoded calls, error text, error type) of one result, as bfcl-eval's `_evaluate_single_ast_entry`."""
    checker, _, utils, _ = _modules()
    prompts, answers = ground_truth(category)
    try:
        decoded = decode(result, category, model, given)
    except Exception as exc:  # the runner's own catch-all: any decoder failure is an invalid answer
        return False, None, f"Invalid syntax. Failed to decode AST. {exc}", "ast_decoder:decoder_failed"
    if not utils.is_function_calling_format_output(decoded):
        return False, None, "Did not output in the specified format.", "ast_decoder:decoder_wrong_output_format"
    language, _ = _formats(category)
    mapping = sys.modules[MODEL_CONFIG].MODEL_CONFIG_MAPPING
    key = model.replace("_", "/")  # the checker's own lookup key (convert_func_name)
    if given is not None and mapping.get(key) != given:  # the checker reads the flags by model name
        mapping[key] = given
    verdict = checker.ast_checker(prompts[sample_id]["function"], decoded, answers[sample_id], language, category,
                                  model)
    errors = verdict.get("error") or []
    valid = bool(verdict["valid"])
    return valid, decoded, "; ".join(str(e) for e in errors), None if valid else verdict.get("error_type")
