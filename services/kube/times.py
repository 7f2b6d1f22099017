"""metav1.MicroTime on the wire: written and read in one place.

Why this module exists: Leases carry ``acquireTime`` and ``renewTime`` as
MicroTime (RFC 3339 with microseconds, UTC, ``2026-01-02T03:04:05.000006Z``);
kubelet's node lease and leader election both write them, and leader election
reads them back. Pure: strings in, datetimes out.
"""

from __future__ import annotations

from datetime import UTC, datetime


def micro_time(moment: datetime) -> str:
    """metav1.MicroTime on the wire (RFC 3339 with microseconds, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(text: str) -> datetime:
    """A MicroTime (or a metav1.Time, without fraction) as an aware UTC datetime; ValueError if malformed."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
