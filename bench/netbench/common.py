"""Shared by every module: where the repository is, the loopback address,
the peer tools' Debian packages, progress/warning output and the usage
error (exit status 2)."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PEER_TOOLS = {"iperf3": "iperf3", "sockperf": "sockperf", "qperf": "qperf"}  # binary -> Debian package
HOST = "127.0.0.1"


def say(msg: str) -> None:
    print(msg, flush=True)


def warn(msg: str) -> None:
    print(f"bench/run: {msg}", file=sys.stderr, flush=True)


class Usage(Exception):
    """A usage error or a missing prerequisite: exit status 2."""
