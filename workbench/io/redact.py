"""Credentials never reach an output: values of secret-looking keys are replaced before writing.

Table configs carry stream credentials (``streamConfigs`` with ``sasl.jaas.config``, Kinesis
``secretKey``, schema-registry passwords), and a run's ``summary.json`` records the scenario it ran,
table config included. The model reads none of these values, so every JSON document the workbench
writes goes through :func:`redact`: a key is secret when one of its words (split at ``.``, ``_``, ``-``
and camelCase) is a credential word, or the key is one of a few known names; a string value that
embeds ``password=`` is secret wherever it sits.

>>> redact({"streamConfigs": {"sasl.jaas.config": "x", "stream.kafka.topic.name": "events",
...                           "security.protocol": "SASL_SSL", "aws.secretKey": "k"}})
{'streamConfigs': {'sasl.jaas.config': '<redacted>', 'stream.kafka.topic.name': 'events', \
'security.protocol': 'SASL_SSL', 'aws.secretKey': '<redacted>'}}
>>> is_secret_key("pinot.query.scheduler.tokens_per_ms"), is_secret_key("ssl.keystore.password")
(False, True)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "redact"]

#: What a secret value becomes.
REDACTED = "<redacted>"
#: A key holding one of these words holds a credential.
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "secret", "token", "credential", "credentials", "jaas",
                           "apikey", "secretkey", "accesskey", "privatekey", "passphrase", "authorization"})
#: Two-word credentials (``access.key``, ``private_key``, ``api-key``).
_SECRET_PAIRS = frozenset({("access", "key"), ("secret", "key"), ("private", "key"), ("api", "key"),
                           ("auth", "token"), ("session", "token")})
#: Whole keys that hold credentials without a credential word (schema-registry basic auth is user:password).
_SECRET_KEYS = frozenset({"basic.auth.user.info", "schema.registry.basic.auth.user.info", "sasl.jaas.config"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_INLINE_PASSWORD = re.compile(r"password\s*=", re.IGNORECASE)


def _words(key: str) -> list[str]:
    return [w.lower() for part in re.split(r"[._\-\s/]+", key) for w in _WORD.findall(part)]


def is_secret_key(key: str) -> bool:
    """Whether a key (``sasl.jaas.config``, ``*.password``, ``secretKey``, ``*.token``...) holds a credential."""
    if key.lower() in _SECRET_KEYS:
        return True
    words = _words(key)
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


def redact(value: Any) -> Any:
    """A copy of plain JSON-like data with every credential value replaced by :data:`REDACTED`.

    Mappings become dicts and tuples lists (what ``json.dumps`` writes anyway); other values are
    returned as they are.
    """
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and is_secret_key(k) and v is not None else redact(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str) and _INLINE_PASSWORD.search(value):
        return REDACTED
    return value
