"""What Pinot's REST APIs say when they refuse a request.

Pinot's controller and broker answer an error as ``{"code": <HTTP status>, "error": "<message>"}`` (the
``ControllerApplicationException`` / ``WebApplicationException`` mappers at 1.5.1); that message is what a user should
see, not the JSON around it.
"""

from __future__ import annotations

import json

__all__ = ["pinot_message"]


def pinot_message(body: str) -> str:
    """Pinot's ``{"code": ..., "error": "..."}`` message, else the body's first line (at most 300 characters).

    >>> pinot_message('{"code": 400, "error": "Invalid table config: clicks_OFFLINE"}')
    'Invalid table config: clicks_OFFLINE'
    >>> pinot_message("Bad Gateway\\n<html>")
    'Bad Gateway'
    """
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("error"):
        return str(doc["error"])
    return body.strip().splitlines()[0][:300] if body.strip() else "(empty answer)"
