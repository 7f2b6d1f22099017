"""Names picked for ``metadata.generateName``: the prefix plus five random characters.

Why this module exists: the committer picks the name of an object created with
``generateName``, and the resourceclaim controller picks it itself for the
claims it creates (so it can name the claim in the pod status in the same
chain of requests, `services.runtime.request_chains`). Both follow
apimachinery's ``SimpleNameGenerator``: the prefix cut to 58 characters, then
5 characters from an alphabet without vowels (no words) and without 0, 1 and 3
(no look-alikes). One rule, one place.
"""

from __future__ import annotations

import secrets

GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_SUFFIX_LENGTH = 5
MAX_NAME_LENGTH = 63
MAX_GENERATED_PREFIX_LENGTH = MAX_NAME_LENGTH - RANDOM_SUFFIX_LENGTH


def random_suffix(length: int = RANDOM_SUFFIX_LENGTH) -> str:
    """``length`` characters drawn from `GENERATE_NAME_ALPHABET`."""
    return "".join(secrets.choice(GENERATE_NAME_ALPHABET) for _ in range(length))


def generate_name(prefix: str) -> str:
    """A name for an object whose ``generateName`` is ``prefix`` (``SimpleNameGenerator.GenerateName``)."""
    return prefix[:MAX_GENERATED_PREFIX_LENGTH] + random_suffix()
