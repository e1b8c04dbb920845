"""Where a URL points: kept apart from the HTTP client so that planning (API-key and batch checks) does not import
openai, a third of a second on every Snakemake start."""

from __future__ import annotations

from ipaddress import ip_address
from urllib.parse import urlsplit


def on_this_machine(url: str) -> bool:
    """Whether `url` names a server on this machine (localhost or a loopback address): a local server, which
    needs no API key, and is no hosted service (no Batch API)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
