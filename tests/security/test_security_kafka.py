"""Kafka SASL and TLS settings reach aiokafka as given, and the password stays out of URLs and reprs.

No SASL broker is needed: the bus URL and the environment are parsed, the
Kafka adapter's client options are built (`services.bus.kafka.config`), and
the aiokafka producer, consumer and admin client the adapter creates are
constructed with them (not started), so the test reads back what aiokafka
itself will use to connect.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from services.apiserver.certs import self_signed
from services.bus import open_bus
from services.bus.kafka import KafkaBus
from services.bus.kafka.config import KafkaSettings, client_options
from services.bus.kafka.consumer import consumer_options
from services.bus.urls import SASL_PASSWORD_ENV, SASL_USERNAME_ENV, KafkaTarget, parse_bus_url

SECRET = "pa55-w0rd-never-logged"


def _security(client: Any) -> dict[str, Any]:
    """What an aiokafka client (its internal AIOKafkaClient) will connect with."""
    return {k.lstrip("_"): v for k, v in vars(client).items() if k.startswith(("_sasl", "_security", "_ssl"))}


@pytest.fixture
def pki(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed(tmp_path / "pki", name="kafka")


def _target(url: str) -> KafkaTarget:
    target = parse_bus_url(url)
    assert isinstance(target, KafkaTarget)
    return target


async def test_sasl_over_tls_reaches_every_aiokafka_client(
    monkeypatch: pytest.MonkeyPatch, pki: tuple[Path, Path]
) -> None:
    cert, key = pki
    monkeypatch.setenv(SASL_USERNAME_ENV, "draplane")
    monkeypatch.setenv(SASL_PASSWORD_ENV, SECRET)
    url = (
        f"kafka://k0.example:9093,k1.example:9093?security_protocol=sasl_ssl&sasl_mechanism=SCRAM-SHA-512"
        f"&ssl_cafile={cert}&ssl_certfile={cert}&ssl_keyfile={key}"
    )
    options = client_options(_target(url), KafkaSettings())
    assert options["bootstrap_servers"] == ["k0.example:9093", "k1.example:9093"]
    assert options["security_protocol"] == "SASL_SSL"
    assert (options["sasl_mechanism"], options["sasl_plain_username"], options["sasl_plain_password"]) == (
        "SCRAM-SHA-512",
        "draplane",
        SECRET,
    )
    context = options["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname is True
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "draplane-apiserver"),),)]
    assert not {k for k in options if k.startswith("ssl_") and k != "ssl_context"}  # only the context goes on

    producer = AIOKafkaProducer(**options, acks="all", enable_idempotence=True)
    consumer = AIOKafkaConsumer(**consumer_options(options, KafkaSettings()))
    admin = AIOKafkaAdminClient(**options)
    try:
        for client in (producer.client, consumer._client, admin._client):
            assert _security(client) | {"ssl_context": None} == {
                "security_protocol": "SASL_SSL",
                "ssl_context": None,
                "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_username": "draplane",
                "sasl_plain_password": SECRET,
                "sasl_kerberos_service_name": "kafka",
                "sasl_kerberos_domain_name": None,
                "sasl_oauth_token_provider": None,
            }
            assert _security(client)["ssl_context"] is context
    finally:
        await producer.stop()
        await consumer.stop()
        await admin.close()


async def test_the_bus_passes_its_url_settings_to_aiokafka(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SASL_PASSWORD_ENV, SECRET)
    bus = open_bus("kafka://broker:9092?security_protocol=SASL_PLAINTEXT&sasl_mechanism=PLAIN&sasl_plain_username=svc")
    assert isinstance(bus, KafkaBus)
    client = bus._client  # the keyword arguments every aiokafka client of this bus gets
    assert {k: client[k] for k in ("security_protocol", "sasl_mechanism", "sasl_plain_username")} == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "svc",
    }
    assert client["sasl_plain_password"] == SECRET
    assert "ssl_context" not in client
    assert SECRET not in bus.url


def test_tls_without_sasl_and_hostname_checking_switched_off(pki: tuple[Path, Path]) -> None:
    cert, _ = pki
    options = client_options(
        _target(f"kafka://broker:9093?security_protocol=SSL&ssl_cafile={cert}&ssl_check_hostname=false"),
        KafkaSettings(),
    )
    assert options["security_protocol"] == "SSL"
    assert options["ssl_context"].check_hostname is False
    assert options["ssl_context"].verify_mode == ssl.CERT_REQUIRED  # the chain is still verified
    assert not any(k.startswith("sasl_") for k in options)


def test_plaintext_by_default_and_no_tls_settings_without_tls() -> None:
    options = client_options(_target("kafka://broker:9092"), KafkaSettings())
    assert options["security_protocol"] == "PLAINTEXT"
    assert "ssl_context" not in options and not any(k.startswith("sasl_") for k in options)
    with pytest.raises(ValueError, match="need security_protocol=SSL or SASL_SSL"):
        client_options(_target("kafka://broker:9092?ssl_cafile=/ca.pem"), KafkaSettings())


def test_the_username_in_the_url_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SASL_USERNAME_ENV, "from-env")
    target = _target("kafka://broker:9092?security_protocol=SASL_PLAINTEXT&sasl_plain_username=from-url")
    assert target.security["sasl_plain_username"] == "from-url"
    monkeypatch.delenv(SASL_USERNAME_ENV)
    assert "sasl_plain_username" not in _target("kafka://broker:9092?security_protocol=SASL_PLAINTEXT").security


@pytest.mark.parametrize(
    "url",
    [
        f"kafka://broker:9092?sasl_plain_password={SECRET}",
        f"kafka://svc:{SECRET}@broker:9092",
    ],
)
def test_the_password_is_refused_in_a_url(url: str) -> None:
    with pytest.raises(ValueError, match=SASL_PASSWORD_ENV) as info:
        parse_bus_url(url)
    assert SECRET not in str(info.value)  # the message quotes the URL, redacted


def test_the_password_is_not_in_the_targets_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bus targets end up in logs and tracebacks; the password must not."""
    monkeypatch.setenv(SASL_PASSWORD_ENV, SECRET)
    target = _target("kafka://broker:9092?security_protocol=SASL_PLAINTEXT")
    assert target.security["sasl_plain_password"] == SECRET
    assert SECRET not in repr(target) and SECRET not in str(target)
