"""`url_for` in templates, built once per request for each endpoint and set of id arguments.

A list page links every row to the same few endpoints (`review.approve`, `console.my_memory_edit`...) with only
an id changing, and Flask's `url_for` matches the whole URL map again on each call: a page made 170-270 of those
calls. Here each (endpoint, argument name) is built once per request with a placeholder id, and each row's URL is
that string with its id put in. Only no arguments or one id (`uuid.UUID`) take this path, because a UUID is written
the same in a path and a query string (hex digits and dashes, nothing to quote); anything else (a filename, a
page cursor, `_external`, two arguments...) is Flask's `url_for` as before.
"""
from __future__ import annotations

import uuid

from flask import Flask, g, url_for

_KEY = "memoria_url_shapes"
# An id no row has (the nil UUID): it marks where the argument goes in the URL built for the shape.
_PLACEHOLDER = uuid.UUID(int=0)
_PLACEHOLDER_TEXT = str(_PLACEHOLDER)


def template_url_for(endpoint: str, **values) -> str:
    """Flask's `url_for(endpoint, **values)`, from this request's cached shape when there are no values or one id."""
    if len(values) > 1:
        return url_for(endpoint, **values)
    (name, value), = values.items() if values else ((None, None),)
    if name is not None and not isinstance(value, uuid.UUID):
        return url_for(endpoint, **values)
    shapes = g.get(_KEY)
    if shapes is None:
        shapes = g.setdefault(_KEY, {})
    shape = shapes.get((endpoint, name))
    if shape is None:
        shape = shapes[(endpoint, name)] = url_for(endpoint, **({name: _PLACEHOLDER} if name else {}))
    return shape.replace(_PLACEHOLDER_TEXT, str(value)) if name else shape


def init_urls(app: Flask) -> None:
    app.jinja_env.globals["url_for"] = template_url_for
