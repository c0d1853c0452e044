"""Claims of collectors that share one collection file: each claims a job before it trains it.

Under the file's lock a collector claims a job in ``<file>.claims``. A job claimed by a live collector is left to
it; claims of collectors that died are ignored, so their jobs are run again. A claim names its process by pid and
start time (a reused pid does not hold it) and lapses after :data:`CLAIM_LEASE_SECONDS`.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from pathlib import Path

logger = logging.getLogger(__name__)

#: how long a claim holds at most: a collector that died on another machine (whose processes cannot be checked
#: from here) blocks its job no longer than this
CLAIM_LEASE_SECONDS = 12 * 3600


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where that cannot be read: with
    the pid it names one process, so a claim is never held by an unrelated process that reuses a dead one's pid."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(entry: dict) -> bool:
    """Whether the collector of a claim still runs: on this machine, a live process with the claim's pid and start
    time; on another, within the lease. A claim in an older format, without its time or its process's start time,
    could hold a job forever (a live process may have reused its pid): it is stale, with a warning."""
    if "claimed_at" not in entry or (entry["host"] == socket.gethostname() and entry.get("started") is None):
        logger.warning("claims: %s's claim by pid %s names no %s; treated as stale", entry.get("job"),
                       entry.get("pid"), "claim time" if "claimed_at" not in entry else "process start time")
        return False
    if time.time() - float(entry["claimed_at"]) > CLAIM_LEASE_SECONDS:
        return False
    if entry["host"] != socket.gethostname():
        return True  # another machine's collector on a shared file system: trust its claim for the lease
    pid = int(entry["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return entry["started"] == _process_start(pid)


def claim(path: Path, job_key: str, done: set[str]) -> bool:
    """Under the lock: claim ``job_key`` for this process unless it is done or claimed by a live collector. Lines of
    the claims file that are not claims (cut short by a crash, edited) claim nothing."""
    claims_path = path.with_name(path.name + ".claims")
    if job_key in done:
        return False
    if claims_path.exists():
        for line in claims_path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                if not isinstance(entry, dict) or entry.get("job") != job_key or entry.get("pid") == os.getpid():
                    continue
                if _alive(entry):
                    return False
            except (ValueError, TypeError, KeyError):
                continue
    entry = {"job": job_key, "host": socket.gethostname(), "pid": os.getpid(), "started": _process_start(os.getpid()),
             "claimed_at": time.time()}
    with open(claims_path, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    return True
