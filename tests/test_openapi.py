"""The OpenAPI document matches the routes the app serves, both ways, and is a valid 3.1 document."""
from __future__ import annotations

import re

from api.openapi import PREFIX


def _served(app) -> set[tuple[str, str]]:
    out = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(PREFIX + "/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            out |= {(m.lower(), path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    return out


def _documented(doc) -> set[tuple[str, str]]:
    return {(method, path) for path, ops in doc["paths"].items() for method in ops}


def test_document_lists_exactly_the_served_api_routes(client):
    resp = client.get("/api/v1/openapi.json")
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    doc = resp.get_json()
    served, documented = _served(client.application), _documented(doc)
    assert served - documented == set(), "served but not documented"
    assert documented - served == set(), "documented but not served"
    # the endpoints are all there
    for needed in [("post", "/api/v1/messages"), ("post", "/api/v1/context"), ("post", "/api/v1/search"),
                   ("post", "/api/v1/traces/{trace_id}/used"), ("post", "/api/v1/memories/for-subjects"),
                   ("post", "/api/v1/link-codes"), ("delete", "/api/v1/conversations/{conversation_id}"),
                   ("delete", "/api/v1/contacts/{contact_id}"), ("delete", "/api/v1/memberships/{user_id}"),
                   ("put", "/api/v1/documents"), ("delete", "/api/v1/documents"),
                   ("post", "/api/v1/conversations/{conversation_id}/retrieve")]:
        assert needed in documented, needed


def test_document_is_openapi_3_1_with_parameters_bodies_and_error_shapes(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    schemas = doc["components"]["schemas"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            names = set(re.findall(r"{(\w+)}", path))
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert names == declared, (method, path)
            for ref in re.findall(r'"\$ref": "#/components/schemas/(\w+)"', str(op).replace("'", '"')):
                assert ref in schemas
            if op["security"]:
                err = op["responses"]["401"]["content"]["application/json"]["schema"]
                assert err == {"$ref": "#/components/schemas/Error"}
    assert schemas["Error"]["properties"]["error"]["required"] == ["code", "message", "field"]


def test_document_validates_against_the_openapi_3_1_schema(client):
    import jsonschema_rs  # installed with schemathesis
    from schemathesis.specs.openapi.definitions import OPENAPI_31

    doc = client.get("/api/v1/openapi.json").get_json()
    errors = [e.message for e in jsonschema_rs.Draft202012Validator(OPENAPI_31).iter_errors(doc)]
    assert errors == []
    for schema in doc["components"]["schemas"].values():
        assert jsonschema_rs.meta.is_valid(schema)
