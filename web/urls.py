"""`url_for` in templates, built once per request for each endpoint and set of id arguments.

A list page links every row to the same few endpoints (`review.approve`, `console.my_memory_edit`...) with only
an id changing, and Flask's `url_for` matches the whole URL map again on each call: a page made 170-270 of those
calls. Here each (endpoint, argument name, other arguments) is built once per request with a placeholder id, and
each row's URL is that string with its id put in. Only at most one id (`uuid.UUID`), beside other arguments that
are text or None, takes this path, because a UUID is written the same in a path and a query string (hex digits and
dashes, nothing to quote); anything else (a number, `_external`, two ids...) is Flask's `url_for` as before.
"""
from __future__ import annotations

import uuid

from flask import Flask, g, url_for

_KEY = "memoria_url_shapes"
# An id no row has (the nil UUID): it marks where the argument goes in the URL built for the shape.
_PLACEHOLDER = uuid.UUID(int=0)
_PLACEHOLDER_TEXT = str(_PLACEHOLDER)


def template_url_for(endpoint: str, **values) -> str:
    """Flask's `url_for(endpoint, **values)`, from this request's cached shape when there are no values or one id,
    or one id beside other values that are plain text or none (a row's link that keeps the page's filter, the
    same on every row: `url_for('console.traces', conversation=t.conversation_id, org=args.get('org'))`)."""
    ids = [k for k, v in values.items() if isinstance(v, uuid.UUID)]
    if len(ids) > 1 or (len(values) > len(ids) and not _plain(values, ids)):
        return url_for(endpoint, **values)
    name = ids[0] if ids else None
    others = tuple((k, v) for k, v in values.items() if k != name)
    shapes = g.get(_KEY)
    if shapes is None:
        shapes = g.setdefault(_KEY, {})
    shape = shapes.get((endpoint, name, others))
    if shape is None:
        shape = shapes[(endpoint, name, others)] = url_for(
            endpoint, **({name: _PLACEHOLDER} if name else {}), **dict(others))
    return shape.replace(_PLACEHOLDER_TEXT, str(values[name])) if name else shape


def _plain(values: dict, ids: list[str]) -> bool:
    """Whether every value but the id is None or text that cannot hold the placeholder (then a cached shape is
    Flask's URL with the id put in)."""
    return all(not k.startswith("_") and (v is None or (type(v) is str and _PLACEHOLDER_TEXT not in v))
               for k, v in values.items() if k not in ids)


def init_urls(app: Flask) -> None:
    app.jinja_env.globals["url_for"] = template_url_for
