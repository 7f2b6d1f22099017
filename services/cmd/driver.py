"""`draplane driver`: the DRA driver of one node (see services.driver.command)."""

from services.driver.command import add_parser

__all__ = ["add_parser"]
