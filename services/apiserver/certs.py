"""A self-signed serving certificate for the apiserver, made with the openssl command.

`draplane up --tls` and the tests use it: one certificate that is its own CA,
valid for 127.0.0.1 and localhost, so a kubeconfig can trust it by embedding it
as ``certificate-authority-data``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


class CertificateError(RuntimeError):
    pass


def self_signed(directory: Path, *, name: str = "apiserver", days: int = 365) -> tuple[Path, Path]:
    """(certificate, key) in ``directory``, created once and reused afterwards."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    if cert.exists() and key.exists():
        return cert, key
    openssl = shutil.which("openssl")
    if openssl is None:
        raise CertificateError("the openssl command is needed to make a serving certificate")
    directory.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-sha256",
            "-days",
            str(days),
            "-subj",
            "/CN=draplane-apiserver",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise CertificateError(f"openssl failed: {result.stderr.strip()}")
    key.chmod(0o600)
    return cert, key
