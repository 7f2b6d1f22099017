"""`draplane nodeagent`: the kubelet-lite of one node (see services.nodeagent.command)."""

from services.nodeagent.command import add_parser

__all__ = ["add_parser"]
