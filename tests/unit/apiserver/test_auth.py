"""Bearer-token authentication from a token file, anonymous access, kubeconfig."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from services.apiserver.http.auth import TokenAuthenticator, TokenFileError
from services.apiserver.kubeconfig import write_kubeconfig

TOKENS = 'secret1,alice,uid-1,"dev,ops"\nsecret2,bob,uid-2\n\n'


def test_token_file_parsing(tmp_path: Any) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKENS)
    auth = TokenAuthenticator.from_file(path)
    alice = auth.authenticate("secret1")
    assert alice is not None and alice.name == "alice"
    assert alice.groups == ("dev", "ops", "system:authenticated")
    bob = auth.authenticate("secret2")
    assert bob is not None and bob.groups == ("system:authenticated",)
    assert auth.authenticate("nope") is None
    with pytest.raises(TokenFileError):
        TokenAuthenticator.from_text("only,two\n")


async def test_requests_without_token_are_refused(make_client: Any) -> None:
    client = await make_client(anonymous=False, authenticator=TokenAuthenticator.from_text(TOKENS))
    for path in ("/api/v1/namespaces/ns/pods", "/api", "/version", "/nothing"):
        r = await client.get(path)
        assert r.status == 401, path
        doc = await r.json()
        assert doc["reason"] == "Unauthorized" and doc["message"] == "Unauthorized"
    r = await client.get("/api/v1/namespaces/ns/pods", headers={"Authorization": "Bearer wrong"})
    assert r.status == 401
    r = await client.get("/api/v1/namespaces/ns/pods", headers={"Authorization": "Bearer secret1"})
    assert r.status == 200
    r = await client.get("/healthz")
    assert r.status == 200 and await r.text() == "ok"


async def test_user_travels_in_requests(make_client: Any, backend: Any) -> None:
    client = await make_client(anonymous=True, authenticator=TokenAuthenticator.from_text(TOKENS))
    await client.post(
        "/api/v1/namespaces/ns/pods", json={"metadata": {"name": "a"}}, headers={"Authorization": "Bearer secret1"}
    )
    assert backend.requests[-1].user.name == "alice"
    assert backend.requests[-1].user.groups == ("dev", "ops", "system:authenticated")
    await client.post("/api/v1/namespaces/ns/pods", json={"metadata": {"name": "b"}})
    assert backend.requests[-1].user.name == "system:anonymous"
    assert backend.requests[-1].user.groups == ("system:unauthenticated",)
    r = await client.get("/api/v1/namespaces/ns/pods", headers={"Authorization": "Bearer wrong"})
    assert r.status == 401  # a bad token is never downgraded to anonymous


def test_kubeconfig(tmp_path: Any) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    path = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:8443", token="secret1", ca_file=ca)
    doc = yaml.safe_load(path.read_text())
    assert doc["current-context"] == "draplane"
    assert doc["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:8443"
    assert doc["clusters"][0]["cluster"]["certificate-authority-data"]
    assert doc["users"][0]["user"] == {"token": "secret1"}
    assert path.stat().st_mode & 0o077 == 0
