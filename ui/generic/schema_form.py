"""A JSON schema (an OpenEnv action, an MCP tool's inputSchema) as flat form fields, and back.

``fields(schema)`` lists one ``FormField`` per leaf: strings (a code editor for long or code-like
ones), integers, numbers, booleans, enums (``enum`` / ``const`` / ``Literal``), lists of scalars
(one item per line) and nested objects (flattened, their paths dotted). Anything else (a list of
objects, a free-form dict, a union of types) is a JSON editor. ``assemble(fields, values)`` builds
the action back and says which field is wrong and how to fix it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

CODE_NAMES = {"code", "source", "program", "script", "patch", "diff", "sql", "query", "kernel", "solution"}
LONG_STRING = 200  # a maxLength above this, or a code-like name, gets a code editor
SKIP_TOP_LEVEL = {"metadata"}  # openenv's Action base field: not the player's to fill
SCALARS = {"string", "integer", "number", "boolean"}


class FormError(ValueError):
    """A value that does not fit its field; the message names the field and the fix."""


@dataclass(frozen=True)
class FormField:
    path: tuple[str, ...]
    kind: str  # string | code | integer | number | boolean | enum | list | json
    label: str
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple = ()
    item_type: str = "string"  # list items

    @property
    def key(self) -> str:
        return ".".join(self.path)


def _resolve(schema: dict, root: dict) -> dict:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema if isinstance(schema, dict) else {}


def _unwrap_optional(schema: dict, root: dict) -> dict:
    """``anyOf: [X, {type: null}]`` (pydantic's Optional[X]) as X, keeping title/description/default."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = [_resolve(o, root) for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(real) == 1:
                outer = {k: v for k, v in schema.items() if k != key}
                return {**real[0], **outer}
    return schema


def _kind(name: str, schema: dict) -> tuple[str, tuple, str]:
    if "enum" in schema:
        return "enum", tuple(schema["enum"]), "string"
    if "const" in schema:
        return "enum", (schema["const"],), "string"
    kind = schema.get("type")
    if kind == "string":
        long = (schema.get("maxLength") or 0) > LONG_STRING or schema.get("format") == "textarea"
        code_like = name.lower() in CODE_NAMES or "contentMediaType" in schema
        return ("code" if long or code_like else "string"), (), "string"
    if kind in ("integer", "number", "boolean"):
        return kind, (), "string"
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        if items.get("type") in SCALARS and "enum" not in items:
            return "list", (), items["type"]
    return "json", (), "string"


def fields(schema: dict, root: Optional[dict] = None, prefix: tuple[str, ...] = (), depth: int = 0) -> list[FormField]:
    """The form's fields for an object schema (nested objects flattened, at most 4 levels deep)."""
    root = root if root is not None else schema
    schema = _unwrap_optional(_resolve(schema, root), root)
    required = set(schema.get("required") or [])
    out: list[FormField] = []
    for name, sub in (schema.get("properties") or {}).items():
        if not prefix and name in SKIP_TOP_LEVEL:
            continue
        sub = _unwrap_optional(_resolve(sub, root), root)
        path = prefix + (name,)
        if sub.get("type") == "object" and sub.get("properties") and depth < 4:
            out += fields(sub, root, path, depth + 1)
            continue
        kind, choices, item_type = _kind(name, sub)
        out.append(FormField(path=path, kind=kind, label=str(sub.get("title") or name), required=name in required,
                             description=str(sub.get("description") or ""), default=sub.get("default"),
                             choices=choices, item_type=item_type))
    return out


def initial(field: FormField) -> Any:
    """The value the form shows before the player types anything."""
    value = field.default
    if field.kind == "json":
        return json.dumps(value, indent=2) if value is not None else ""
    if field.kind == "list":
        return "\n".join(str(v) for v in value or [])
    if field.kind == "boolean":
        return bool(value)
    if field.kind == "enum":
        return value if value is not None else (field.choices[0] if field.required and field.choices else None)
    return value if value is not None else ("" if field.kind in ("string", "code") else None)


def _scalar(field: FormField, kind: str, value: Any) -> Any:
    if kind == "integer":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise FormError(f"{field.label}: {value!r} is not a whole number") from None
        if number != int(number):
            raise FormError(f"{field.label}: {value!r} is not a whole number: drop the fraction")
        return int(number)
    if kind == "number":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise FormError(f"{field.label}: {value!r} is not a number") from None
    if kind == "boolean":
        text = str(value).strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise FormError(f"{field.label}: {value!r} is not true or false")
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def parse(field: FormField, value: Any) -> Any:
    """The form's ``value`` of ``field`` as the JSON value to send (``...`` for an omitted optional one)."""
    if field.kind == "boolean":
        return bool(value)
    if _empty(value):
        if field.required:
            raise FormError(f"{field.label} is required: fill it in" + (f" ({field.description})"
                                                                         if field.description else ""))
        return ...
    if field.kind == "json":
        try:
            return json.loads(value)
        except ValueError as e:
            raise FormError(f"{field.label}: not valid JSON ({e.msg} at line {e.lineno}): fix the JSON") from None
    if field.kind == "list":
        return [_scalar(field, field.item_type, line.strip()) for line in str(value).splitlines() if line.strip()]
    if field.kind == "enum":
        for choice in field.choices:  # the dropdown hands back strings; keep the schema's own type
            if value == choice or str(value) == str(choice):
                return choice
        raise FormError(f"{field.label}: {value!r} is not one of {list(field.choices)}")
    if field.kind in ("integer", "number"):
        return _scalar(field, field.kind, value)
    return str(value)


def assemble(form_fields: list[FormField], values: list[Any]) -> dict[str, Any]:
    """The action (nested dict) from the form's values, in field order."""
    action: dict[str, Any] = {}
    for field, value in zip(form_fields, values):
        parsed = parse(field, value)
        if parsed is ...:
            continue
        node = action
        for part in field.path[:-1]:
            node = node.setdefault(part, {})
        node[field.path[-1]] = parsed
    return action


def as_tool(name: str, description: str, schema: dict) -> dict[str, Any]:
    """An OpenAI function tool whose parameters are ``schema`` (without openenv's metadata field)."""
    params = json.loads(json.dumps(schema))
    props = params.get("properties") or {}
    for key in SKIP_TOP_LEVEL:
        props.pop(key, None)
    return {"type": "function", "function": {"name": name, "description": description[:1000], "parameters": params}}
