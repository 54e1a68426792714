"""The route table and the OpenAPI 3.1 document built from it and the pydantic models.

Every API view is declared with `route(...)`: it registers the Flask rule and records the operation
(method, path, parameters, body and response models), so the document cannot list a route the app
does not serve, nor miss one (tests/test_openapi.py compares both ways).
"""
from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

from flask import Response, current_app, request
from pydantic import BaseModel, ValidationError

from api.errors import ApiError

PREFIX = "/api/v1"
# A request body larger than this is refused before it is read (Flask's own cap is 1 MiB).
MAX_BODY_BYTES = 512 * 1024


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # Flask syntax, relative to PREFIX: /conversations/<conversation_id>
    endpoint: str
    summary: str
    tag: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    status: int = 200
    path_params: tuple[str, ...] = ()
    public: bool = False
    errors: tuple[int, ...] = field(default=(400, 401, 404, 422))
    auth: str = "org"  # org: an org API key; platform: a platform API key; public: none

    @property
    def openapi_path(self) -> str:
        return PREFIX + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", self.path)


ROUTES: list[Route] = []


# ---------------------------------------------------------------------------- request parsing

def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _check_strings(value: Any, path: str = "") -> None:
    """Refuse NUL bytes and lone surrogates anywhere: PostgreSQL cannot store them, so nothing is stored."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ApiError(400, "invalid_text", "Text must not contain NUL bytes.", path or None)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(400, "invalid_text", "Text must be valid UTF-8 (no lone surrogates).",
                           path or None) from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, path)
            _check_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_strings(v, f"{path}.{i}" if path else str(i))
    elif isinstance(value, float) and not math.isfinite(value):
        raise ApiError(400, "invalid_json", "Numbers must be finite.", path or None)


def read_json() -> Any:
    """The request body as JSON: size-capped, strict UTF-8, no NUL bytes, no NaN."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise ApiError(413, "payload_too_large", f"The request body is larger than {MAX_BODY_BYTES} bytes.")
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")
    raw = request.stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError(413, "payload_too_large", f"The request body is larger than {MAX_BODY_BYTES} bytes.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "invalid_utf8", "The body must be UTF-8.") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise ApiError(400, "invalid_json", "The body is not valid JSON.") from None
    _check_strings(data)
    return data


def _validation_error(exc: ValidationError) -> ApiError:
    first = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body",))
    message = first.get("msg", "Invalid input.")
    return ApiError(422, "invalid_input", f"{loc}: {message}" if loc else message, loc or None)


def parse(model: type[BaseModel], data: Any) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc) from None


def _query_data(model: type[BaseModel]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name in model.model_fields:
        values = request.args.getlist(name)
        if values:
            data[name] = values if len(values) > 1 else values[0]
    _check_strings(data)
    return data


def parse_uuid(raw: str, name: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        # Not an id that could exist: the same answer as an id of another org.
        raise ApiError(404, "not_found", f"No such {name.removesuffix('_id').replace('_', ' ')}.", name) from None


# ---------------------------------------------------------------------------- declaring routes

def route(bp, path: str, method: str, *, summary: str, tag: str, body=None, query=None, response=None,
          status: int = 200, public: bool = False, errors: tuple[int, ...] = (400, 401, 404, 422),
          auth: str = "org"):
    """Register a JSON API view on `bp` and in the route table.

    The view gets its path parameters (uuid-named ones parsed), `body=` and `query=` models, and the
    request's org id as `org_id=` (auth="org", the default) or the platform key's id as
    `platform_key_id=` (auth="platform"); it returns a response model instance.
    """
    from api.auth import authenticate, authenticate_platform

    auth = "public" if public else auth

    params = tuple(re.findall(r"<(?:\w+:)?(\w+)>", path))

    def decorator(view: Callable[..., BaseModel]):
        @wraps(view)
        def wrapped(**kwargs):
            kw: dict[str, Any] = {}
            if auth == "org":
                kw["org_id"] = authenticate()
            elif auth == "platform":
                kw["platform_key_id"] = authenticate_platform()
            for name in params:
                kw[name] = parse_uuid(kwargs[name], name) if name.endswith("_id") else kwargs[name]
            if query is not None:
                kw["query"] = parse(query, _query_data(query))
            if body is not None:
                kw["body"] = parse(body, read_json())
            result = view(**kw)
            if isinstance(result, Response):
                return result
            payload = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
            return current_app.response_class(json.dumps(payload, ensure_ascii=False), status=status,
                                              mimetype="application/json")

        bp.add_url_rule(path, endpoint=view.__name__, view_func=wrapped, methods=[method])
        ROUTES.append(Route(method=method, path=path, endpoint=f"{bp.name}.{view.__name__}", summary=summary,
                            tag=tag, body=body, query=query, response=response, status=status,
                            path_params=params, public=auth == "public", errors=errors, auth=auth))
        return view
    return decorator


# ---------------------------------------------------------------------------- the document

def _schema_of(model: type[BaseModel], components: dict[str, Any], mode: str) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode=mode)
    for name, sub in schema.pop("$defs", {}).items():
        components[name] = sub
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


ERROR_SCHEMA = {
    "type": "object", "required": ["error"], "additionalProperties": False,
    "properties": {"error": {
        "type": "object", "required": ["code", "message", "field"], "additionalProperties": False,
        "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                       "field": {"type": ["string", "null"]}}}},
}
REASONS = {400: "Malformed request (bad JSON, invalid UTF-8, NUL bytes)", 401: "No key, a wrong key or a revoked key",
           403: "Not allowed (or the organization is suspended)", 404: "Not found (or not in the key's organization)",
           409: "Conflict", 413: "Request body too large", 415: "Body is not JSON", 422: "Invalid input",
           429: "Too many requests",
           503: "Briefly unavailable (database or queue down or restarting); retry after Retry-After seconds"}


def build_document() -> dict[str, Any]:
    components: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, Any] = {}
    for r in ROUTES:
        op: dict[str, Any] = {"operationId": r.endpoint.split(".", 1)[1], "summary": r.summary, "tags": [r.tag],
                              "responses": {}}
        parameters = [{"name": p, "in": "path", "required": True,
                       "schema": {"type": "string", "format": "uuid"} if p.endswith("_id")
                       else {"type": "string", "minLength": 1, "maxLength": 200}} for p in r.path_params]
        if r.query is not None:
            qs = r.query.model_json_schema(mode="validation")
            for name, prop in qs.get("properties", {}).items():
                parameters.append({"name": name, "in": "query", "required": name in qs.get("required", []),
                                   "schema": prop})
        if parameters:
            op["parameters"] = parameters
        if r.body is not None:
            op["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": _schema_of(r.body, components, "validation")}}}
        ok: dict[str, Any] = {"description": "OK"}
        if r.response is not None:
            ok["content"] = {"application/json": {"schema": _schema_of(r.response, components, "serialization")}}
        op["responses"][str(r.status)] = ok
        # Every keyed route reads the database, so any of them may answer 503 during an outage.
        codes = (set(r.errors) | ({401, 503} if not r.public else set()) | ({403} if r.auth == "org" else set())
                 | ({413, 415} if r.body else set()))
        for code in sorted(codes):
            op["responses"][str(code)] = {"description": REASONS.get(code, "Error"), "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        op["security"] = [] if r.public else [{"platformKey": []}] if r.auth == "platform" else [{"apiKey": []}]
        paths.setdefault(r.openapi_path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "memoria agent API", "version": "1.0.0",
                 "description": "Long-term memory for conversational agents. Every request carries an org API "
                                "key (Authorization: Bearer <key>) and is scoped to that org; the platform "
                                "operations take a platform key instead."},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": components,
                       "securitySchemes": {
                           "apiKey": {"type": "http", "scheme": "bearer",
                                      "description": "An org API key from the console."},
                           "platformKey": {"type": "http", "scheme": "bearer",
                                           "description": "A platform API key a platform admin created: it "
                                                          "may create organizations."}}},
    }
