"""``draplane up --tls --token-auth-file F``: kubectl reaches the stack over HTTPS with a token (issue 17, "why" 6).

kubectl sends a bearer token only over TLS, so before ``--tls`` a stack with
``--token-auth-file`` could not be used with kubectl at all. The written
kubeconfig trusts the stack's self-signed CA (``certificate-authority-data``)
and carries the token file's first token. A wrong token is kube-apiserver's
401, which kubectl 1.32 words ``You must be logged in to the server
(Unauthorized)`` (k8s.io/kubectl/pkg/cmd/util/helpers.go); a request with no
token at all gets the 401 Status body kube-apiserver sends. (kubectl itself,
given a kubeconfig user with no credentials over HTTPS, asks for a user name
on the terminal instead of sending the request.)
"""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.integration.stack.processes import Command

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
TOKEN = "tls-test-admin-token"


@dataclass
class TlsStack:
    data: Path
    url: str
    lines: list[str]


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsStack]:
    root = tmp_path_factory.mktemp("tls")
    tokens = root / "tokens.csv"
    tokens.write_text(f'{TOKEN},admin,1,"system:masters"\n')
    data = root / "d"
    cmd = Command(
        "up", "--data", str(data), "--listen", "127.0.0.1:0", "--nodes", "1", "--tls", "--token-auth-file", str(tokens)
    )
    try:
        url = cmd.wait_for_line(r"draplane is ready: (\S+)", timeout=120).group(1)
        yield TlsStack(data, url, cmd.lines)
    finally:
        cmd.stop()


def kubectl(stack: TlsStack, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    """kubectl with the stack's kubeconfig (its token unless ``token`` overrides it)."""
    argv = [KUBECTL, "--kubeconfig", str(stack.data / "kubeconfig"), *args]
    if token is not None:
        argv.insert(1, f"--token={token}")
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def test_the_stack_serves_https_and_the_kubeconfig_trusts_its_ca(tls_stack: TlsStack) -> None:
    assert tls_stack.url.startswith("https://127.0.0.1:")
    config = yaml.safe_load((tls_stack.data / "kubeconfig").read_text())
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == tls_stack.url
    assert (
        base64.b64decode(cluster["certificate-authority-data"])
        == (tls_stack.data / "pki" / "apiserver.crt").read_bytes()
    )
    assert "insecure-skip-tls-verify" not in cluster
    assert config["users"][0]["user"] == {"token": TOKEN}  # the token file's first
    assert (tls_stack.data / "kubeconfig").stat().st_mode & 0o077 == 0


def test_kubectl_with_the_token_gets_and_creates(tls_stack: TlsStack) -> None:
    nodes = kubectl(tls_stack, "get", "nodes", "-o", "name")
    assert (nodes.returncode, nodes.stdout, nodes.stderr) == (0, "node/node-1\n", "")
    created = kubectl(tls_stack, "create", "namespace", "tls-made")
    assert (created.returncode, created.stdout, created.stderr) == (0, "namespace/tls-made created\n", "")
    assert kubectl(tls_stack, "get", "namespace", "tls-made", "-o", "name").stdout == "namespace/tls-made\n"


def test_kubectl_with_a_wrong_token_is_unauthorized(tls_stack: TlsStack) -> None:
    result = kubectl(tls_stack, "get", "nodes", token="not-a-token")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "error: You must be logged in to the server (Unauthorized)"


def test_a_request_without_a_token_is_401_as_kube_apiserver_words_it(tls_stack: TlsStack) -> None:
    context = ssl.create_default_context(cafile=str(tls_stack.data / "pki" / "apiserver.crt"))
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{tls_stack.url}/api/v1/nodes", context=context, timeout=30)
    assert caught.value.code == 401
    assert json.loads(caught.value.read()) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
