"""Who is calling: bearer tokens from a kube-apiserver ``--token-auth-file``.

The file is CSV, one user a line: ``token,user,uid[,"group1,group2"]``.
Authenticated users also get the ``system:authenticated`` group, as in
Kubernetes. A request without credentials is refused with 401 unless the
server runs with anonymous access (the demo stack), when it becomes
``system:anonymous`` in ``system:unauthenticated``. A bad token is always 401.

`WatchLimiter` bounds the concurrent watch streams one user holds, so one
runaway client cannot pin every connection; past the limit it gets 429 with
``Retry-After``.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from services.api.machinery.status import unauthorized
from services.apiserver.http.errors import too_many_requests
from topics.envelope import UserInfo

ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))
AUTHENTICATED_GROUP = "system:authenticated"


class Authenticator(Protocol):
    def authenticate(self, token: str) -> UserInfo | None:
        """The user a bearer token belongs to, or None when it is unknown."""
        ...


@dataclass(frozen=True, slots=True)
class TokenRecord:
    user: UserInfo
    uid: str


class TokenFileError(ValueError):
    """A token file line Kubernetes would refuse."""


class TokenAuthenticator:
    """Static bearer tokens, as ``--token-auth-file`` loads them."""

    def __init__(self, tokens: Mapping[str, TokenRecord]) -> None:
        self._tokens = dict(tokens)

    @classmethod
    def from_file(cls, path: str | Path) -> TokenAuthenticator:
        return cls.from_text(Path(path).read_text(), source=str(path))

    @classmethod
    def from_text(cls, text: str, *, source: str = "<tokens>") -> TokenAuthenticator:
        tokens: dict[str, TokenRecord] = {}
        for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < 3:
                raise TokenFileError(
                    f"token file '{source}' must have at least 3 columns (token, user name, "
                    f"user uid), found {len(row)} on line {lineno}"
                )
            token, name, uid = row[0].strip(), row[1].strip(), row[2].strip()
            if not token:
                continue
            groups = [g.strip() for g in row[3].split(",") if g.strip()] if len(row) > 3 else []
            if AUTHENTICATED_GROUP not in groups:
                groups.append(AUTHENTICATED_GROUP)
            tokens[token] = TokenRecord(UserInfo(name, tuple(groups)), uid)
        return cls(tokens)

    def authenticate(self, token: str) -> UserInfo | None:
        record = self._tokens.get(token)
        return None if record is None else record.user

    def first_token(self) -> str | None:
        """The file's first token: the one ``draplane up`` writes into its kubeconfig."""
        return next(iter(self._tokens), None)

    def uid(self, token: str) -> str:
        """The uid column of a token's line ("" for an unknown token)."""
        record = self._tokens.get(token)
        return "" if record is None else record.uid


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def authenticate(authorization: str | None, *, authenticator: Authenticator | None, anonymous: bool) -> UserInfo:
    """The request's user; raise 401 Unauthorized as Kubernetes does."""
    token = bearer_token(authorization)
    if token is not None and authenticator is not None:
        user = authenticator.authenticate(token)
        if user is None:
            raise unauthorized()
        return user
    if token is not None and authenticator is None:
        # No token authenticator configured: the token means nothing here.
        if anonymous:
            return ANONYMOUS
        raise unauthorized()
    if anonymous:
        return ANONYMOUS
    raise unauthorized()


class WatchLimiter:
    """At most ``limit`` concurrent watches per user name."""

    def __init__(self, limit: int, *, retry_after: int = 1) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self._open: defaultdict[str, int] = defaultdict(int)

    def open_count(self, user: str) -> int:
        return self._open.get(user, 0)

    @contextmanager
    def hold(self, user: str) -> Iterator[None]:
        if self.limit > 0 and self._open[user] >= self.limit:
            raise too_many_requests(self.retry_after)
        self._open[user] += 1
        try:
            yield
        finally:
            self._open[user] -= 1
            if self._open[user] <= 0:
                del self._open[user]
