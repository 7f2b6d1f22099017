"""Replay tests record a real run on their own log per test (``bus_url``: embedded and Kafka), then replay it."""
