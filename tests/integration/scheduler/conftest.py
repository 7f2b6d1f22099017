"""Scheduler scenario tests run on their own log per test: ``bus_url`` gives embedded and Kafka."""
