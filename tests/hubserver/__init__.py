"""A loopback Hugging Face Hub for tests (reference §15). See server.py."""

from hubserver.server import HubServer, RequestRecord

__all__ = ["HubServer", "RequestRecord"]
