"""Query option keys as Pinot's SQL parser hands them on.

Pinot resolves each key of a query's ``SET k = v;`` options to the option's own spelling whatever its
case (``QueryOptionsUtils.resolveCaseInsensitiveOptions``, over ``QueryOptionKey``); a key it does not
know is kept as written. The model reads only some options, so it resolves against those.

>>> resolve_keys([("TIMEOUTMS", "5"), ("myKey", "x")], spellings(["timeoutMs"]))
{'timeoutMs': '5', 'myKey': 'x'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["resolve_keys", "spellings"]


def spellings(keys: Iterable[str]) -> dict[str, str]:
    """Each option key by its lower-case form: what :func:`resolve_keys` matches against."""
    return {key.lower(): key for key in keys}


def resolve_keys(options: Iterable[tuple[str, str]], known: Mapping[str, str]) -> dict[str, str]:
    """A query's own options, each key under the ``known`` spelling it matches case-insensitively (see
    :func:`spellings`), others as written."""
    return {known.get(key.lower(), key): value for key, value in options}
