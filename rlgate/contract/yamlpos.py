"""Safe YAML loading that remembers where every value came from (line and column).

pydantic reports errors by field path; users fix files by line. This module builds both the plain
Python data (through PyYAML's SafeLoader, so no tag ever executes code) and a map from field path
to source position, and turns pydantic errors into one `InputError` that names file:line:column.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from rlgate._core.errors import InputError

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Pos:
    """A 1-based line/column in a source file."""

    line: int
    column: int


@dataclass
class YamlDoc:
    """Parsed YAML plus the position of every key and value."""

    file: Path
    data: Any
    value_pos: dict[PathKey, Pos]
    key_pos: dict[PathKey, Pos]

    def pos_of(self, path: Sequence[str | int], *, key: bool = False) -> Pos:
        """Position of the deepest known prefix of `path` (the key itself when `key`)."""
        items = tuple(path)
        while items:
            table = self.key_pos if key else self.value_pos
            if items in table:
                return table[items]
            if not key and items in self.key_pos:
                return self.key_pos[items]
            items = items[:-1]
        return self.value_pos.get((), Pos(1, 1))

    def error(self, path: Sequence[str | int], message: str, fix: str | None = None, *,
              key: bool = False) -> InputError:
        pos = self.pos_of(path, key=key)
        return InputError(message, file=self.file, line=pos.line, column=pos.column,
                          field=dotted(path) or None, fix=fix)


def dotted(path: Sequence[str | int]) -> str:
    """`('gates', 'hard', 0, 'max')` → `gates.hard[0].max`."""
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def _mark(node: yaml.Node) -> Pos:
    return Pos(node.start_mark.line + 1, node.start_mark.column + 1)


_STR, _MERGE = "tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"
_KEY_KINDS = {"tag:yaml.org,2002:null": "YAML's null", "tag:yaml.org,2002:int": "a number",
              "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:timestamp": "a date"}


def _check_key(file: Path, key_node: yaml.Node, path: PathKey) -> None:
    """Every key of a contract, suite or policy is a name; `null:`, `~:`, `on:` or `1:` would reach pydantic as
    None, True or 1 and come back as "Keys should be strings" with no line of its own."""
    if isinstance(key_node, yaml.ScalarNode) and key_node.tag in (_STR, _MERGE):
        return
    pos = _mark(key_node)
    if not isinstance(key_node, yaml.ScalarNode):
        raise InputError("a key here is a list or mapping, not a name", file=file, line=pos.line,
                         column=pos.column, field=dotted(path) or None, fix="write the key's name")
    text = str(key_node.value)
    kind = _KEY_KINDS.get(key_node.tag, f"the tag {key_node.tag}")
    if key_node.tag == "tag:yaml.org,2002:bool":  # true/false, yes/no, on/off in YAML 1.1
        kind = f"YAML's boolean {str(text.lower() in ('true', 'yes', 'on', 'y')).lower()}"
    raise InputError(f"the key '{text}' reads as {kind}, not a name", file=file, line=pos.line, column=pos.column,
                     field=dotted([*path, text]), fix=f"write the key's name, or quote it ('{text}':) if you mean "
                     "the word")


def _walk(doc: YamlDoc, node: yaml.Node, path: PathKey) -> None:
    doc.value_pos[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, Pos] = {}
        for key_node, value_node in node.value:
            _check_key(doc.file, key_node, path)
            key = str(key_node.value)
            if key in seen:
                first = seen[key]
                raise InputError(
                    f"duplicate key '{key}' (first at line {first.line})", file=doc.file,
                    line=_mark(key_node).line, column=_mark(key_node).column,
                    field=dotted([*path, key]), fix="keep one of the two entries")
            seen[key] = _mark(key_node)
            child: PathKey = (*path, key)
            doc.key_pos[child] = _mark(key_node)
            _walk(doc, value_node, child)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(doc, item, (*path, index))


#: Values that aliases may add by repeating an anchored list or mapping; a contract needs a few, an alias bomb
#: (anchors of anchors) billions, which would exhaust memory before any check ran.
MAX_ALIAS_VALUES = 100_000


def _check_aliases(file: Path, root: yaml.Node) -> None:
    """Refuse a list or mapping that contains itself and aliases that expand past MAX_ALIAS_VALUES.

    An alias is the anchored node object itself, so a node met again is an alias; sizes are memoised per
    node, so this is linear in the file whatever the aliases expand to.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    distinct = 0

    def size(node: yaml.Node) -> int:
        nonlocal distinct
        key = id(node)
        if key in open_nodes:
            pos = _mark(node)
            raise InputError(f"the {'mapping' if isinstance(node, yaml.MappingNode) else 'list'} anchored here "
                             "contains itself through an alias (a recursive alias)", file=file,
                             line=pos.line, column=pos.column,
                             fix="remove the alias to its own anchor; a contract holds plain, finite values")
        if key in sizes:
            return sizes[key]
        if isinstance(node, yaml.MappingNode):
            children: list[yaml.Node] = [item for pair in node.value for item in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        open_nodes.add(key)
        total = 1 + sum(size(child) for child in children)
        open_nodes.discard(key)
        sizes[key] = total
        distinct += 1
        return total

    expanded = size(root) - distinct
    if expanded > MAX_ALIAS_VALUES:
        raise InputError(f"aliases expand to {expanded:,} more values (more than {MAX_ALIAS_VALUES:,}; an alias "
                         "bomb?)", file=file, fix="write the values out, or use fewer aliases of aliases")


def load_yaml(file: Path) -> YamlDoc:
    """Read a YAML mapping safely; every failure is an InputError naming the file."""
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", file=file, fix="check the path") from None
    except IsADirectoryError:
        raise InputError("is a folder, not a YAML file", file=file, fix="point at the .yaml file") from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=file) from None
    nul = raw.find(b"\x00", 0, 8192)
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        column = nul - (raw.rfind(b"\n", 0, nul) + 1) + 1
        raise InputError("is a binary file, not YAML (NUL byte)", file=file, line=line, column=column,
                         fix="point at the contract's .yaml file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"is not UTF-8 text (byte {exc.start})", file=file,
                         fix="save the file as UTF-8 YAML") from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InputError("file is empty", file=file, line=1, column=1,
                             fix="write a mapping starting with 'schema_version: 1' (see `rlgate init`)")
        _check_aliases(file, node)
        doc = YamlDoc(file=file, data=None, value_pos={}, key_pos={})
        if isinstance(node, yaml.MappingNode):  # before constructing, which folds merge keys (<<) into the mapping
            _walk(doc, node, ())
        data = doc.data = loader.construct_document(node)
    except RecursionError:
        raise InputError("nested too deeply to read (thousands of levels of lists or mappings)", file=file,
                         fix="a contract nests a few levels deep: check for runaway brackets") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark
        if exc.context and context is not None and mark is not None and context.line != mark.line:
            problem += f" ({exc.context} started at line {context.line + 1}, column {context.column + 1})"
        raise InputError(f"YAML syntax error: {problem}", file=file,
                         line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
                         fix="fix the YAML syntax at this position (indentation, ':' after keys, quotes)") from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {exc}", file=file) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "null"
        raise InputError(f"top level is a {kind}, not a mapping", file=file, line=1, column=1,
                         fix="the file must be a mapping of keys (schema_version, name, ...)")
    return doc


# --------------------------------------------------------------------------- pydantic errors
def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as `list[X] | None`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, dict, tuple):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for item in loc:
        if current is None:
            return None
        if isinstance(item, int):
            continue
        field = current.model_fields.get(item)
        if field is None:
            continue  # union member tags such as 'Suite' or dict keys
        current = _model_in(field.annotation)
    return current


def _clean_loc(doc: YamlDoc, loc: Sequence[str | int], base: PathKey) -> PathKey:
    """Drop pydantic's union tags so the path matches the YAML document."""
    out: list[str | int] = list(base)
    for item in loc:
        candidate = (*out, item)
        if candidate in doc.value_pos or candidate in doc.key_pos or isinstance(item, int):
            out.append(item)
        elif isinstance(item, str) and (item[:1].isupper() or "[" in item or item in ("str", "int", "float",
                                                                                          "bool", "literal")):
            continue
        else:
            out.append(item)
    return tuple(out)


_TYPE_FIXES = {
    "float_parsing": "write a number, e.g. 0.02",
    "float_type": "write a number, e.g. 0.02",
    "int_parsing": "write a whole number, e.g. 1",
    "int_type": "write a whole number, e.g. 1",
    "int_from_float": "write a whole number, e.g. 1",
    "finite_number": "write a finite number (nan and inf are not thresholds)",
    "bool_parsing": "write true or false",
    "bool_type": "write true or false",
    "string_type": "write text (quote it if it looks like a number)",
    "list_type": "write a list, e.g. [a, b] or one '- item' per line",
    "dict_type": "write a mapping of keys",
    "model_type": "write a mapping of keys",
    "model_attributes_type": "write a mapping of keys",
    "greater_than": "use a larger value",
    "greater_than_equal": "use a larger value",
    "less_than": "use a smaller value",
    "less_than_equal": "use a smaller value",
    "too_short": "add at least one entry",
    "string_too_short": "write a name (it labels reports, history and run manifests)",
}


def suggest(word: str, options: Sequence[str]) -> str | None:
    """Close match for a misspelled name, or None."""
    found = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def _branch_errors(errors: list[Any]) -> list[Any]:
    """Drop a union member's "not this type" when another member of the same union got further.

    `suites: [{...inline suite...}]` is `str | Suite`: a typo inside the suite also fails the str
    member ("Input should be a valid string; got dict"), which pydantic lists first.
    """
    def deeper(error: Any) -> bool:
        loc = tuple(error["loc"])
        return any(len(other["loc"]) > len(loc) and tuple(other["loc"][:len(loc) - 1]) == loc[:-1]
                   for other in errors)

    def member(error: Any) -> bool:  # the loc ends in a union member's tag, e.g. ('suites', 0, 'str')
        tag = error["loc"][-1] if error["loc"] else None
        return isinstance(tag, str) and (tag[:1].isupper() or tag in ("str", "int", "float", "bool"))

    kept = [e for e in errors if not (str(e["type"]).endswith("_type") and member(e) and deeper(e))] or errors
    # a misspelled key is also a missing one: "unknown key 'taks', did you mean 'tasks'?" says both
    typo = [e for e in kept if e["type"] == "extra_forbidden" and kept[0]["type"] == "missing"
            and tuple(e["loc"][:-1]) == tuple(kept[0]["loc"][:-1])]
    return [*typo, *(e for e in kept if e not in typo)]


def validation_to_input_error(exc: ValidationError, doc: YamlDoc, model: type[BaseModel],
                              base: PathKey = ()) -> InputError:
    """The first pydantic error as one located, actionable InputError."""
    errors = _branch_errors(exc.errors(include_url=False))
    first = errors[0]
    path = _clean_loc(doc, first["loc"], base)
    more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
    kind = first["type"]
    if kind == "extra_forbidden":
        key = str(path[-1])
        owner = _model_at(model, [p for p in path[len(base):-1]])
        allowed = sorted(owner.model_fields) if owner else []
        close = suggest(key, allowed)
        fix: str | None = f"did you mean '{close}'?" if close else f"valid keys here: {', '.join(allowed)}"
        return doc.error(path, f"unknown key '{key}'{more}", fix, key=True)
    if kind == "missing":
        name = str(path[-1])
        owner = _model_at(model, [p for p in path[len(base):-1]])
        info = owner.model_fields.get(name) if owner else None
        hint = f" ({info.description})" if info and info.description else ""
        return doc.error(path[:-1], f"missing required field '{name}'{hint}{more}",
                         f"add '{name}:' here")
    got = first.get("input")
    shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
    if kind == "literal_error" and path and path[-1] == "schema_version":
        return doc.error(path, f"this rlgate reads schema_version {first['ctx']['expected']}, not {shown}{more}",
                         f"write schema_version: {first['ctx']['expected']}, or use a newer rlgate if the file was "
                         "written for one")
    if kind in ("model_type", "model_attributes_type"):  # not "instance of PrimaryGate": name the keys it needs
        owner = _model_at(model, [p for p in path[len(base):]])
        needed = [n for n, f in owner.model_fields.items() if f.is_required()] if owner else []
        example = ", ".join(f"{n}: ..." for n in needed)
        return doc.error(path, f"expected a mapping of keys; got {shown}{more}",
                         f"write a mapping with {', '.join(needed)}, e.g. {{{example}}}" if needed
                         else _TYPE_FIXES[kind])
    message = first["msg"].removeprefix("Value error, ")
    if kind.endswith(("_type", "_parsing")) or kind in ("literal_error", "string_too_short"):
        message = f"{message}; got {shown}"
    fix = first.get("ctx", {}).get("fix") or _TYPE_FIXES.get(kind)  # a validator's own fix comes first
    if kind == "literal_error" and "expected" in first.get("ctx", {}):
        fix = f"use one of {first['ctx']['expected']}"
    return doc.error(path, message + more, fix)
