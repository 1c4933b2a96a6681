"""A loopback Hugging Face Hub for tests. See server.py."""

from hubserver.server import HubServer, RequestRecord

__all__ = ["HubServer", "RequestRecord"]
