"""Tell GitHub a checkpoint is ready: the `repository_dispatch` event that starts the gate workflow.

Called from the training job (a TRL callback, a verl hook, a shell step), so it uses only the
standard library and never raises into the trainer except through `DispatchError`, which the
hooks catch: a failed notification must not stop a training run.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

EVENT_TYPE = "checkpoint-ready"
#: GitHub accepts at most 10 top-level properties in client_payload.
MAX_PAYLOAD_KEYS = 10
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class DispatchError(RuntimeError):
    """The event could not be sent (bad token, unknown repository, network); the message says which."""


def checkpoint_ready_payload(checkpoint: str | Path, training_run: str | None = None, *,
                             baseline: str | None = None, pull_request: int | None = None,
                             **extra: Any) -> dict[str, Any]:
    """The client_payload the gate workflow reads: checkpoint, training_run, and optional fields."""
    payload: dict[str, Any] = {"checkpoint": str(checkpoint)}
    if training_run:
        payload["training_run"] = training_run
    if baseline:
        payload["baseline"] = baseline
    if pull_request is not None:
        payload["pull_request"] = pull_request
    payload.update(extra)
    if len(payload) > MAX_PAYLOAD_KEYS:
        raise DispatchError(f"client_payload has {len(payload)} top-level keys; GitHub accepts {MAX_PAYLOAD_KEYS}")
    return payload


def send_dispatch(repo: str, payload: Mapping[str, Any], *, event_type: str = EVENT_TYPE,
                  token: str | None = None, api_url: str | None = None, attempts: int = 3,
                  timeout: float = 30.0, sleep: Callable[[float], None] = time.sleep) -> None:
    """POST /repos/{repo}/dispatches; retries server errors and network failures, not client errors.

    The token (a fine-grained token with Contents: read and write on `repo`, or a classic token with
    `repo` scope) comes from `token`, else $RLGATE_GITHUB_TOKEN, $GH_TOKEN or $GITHUB_TOKEN.
    """
    if not _REPO.match(repo):
        raise DispatchError(f"repository must be OWNER/NAME, got {repo!r}")
    token = token or next((os.environ[k] for k in ("RLGATE_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
                           if os.environ.get(k)), None)
    if not token:
        raise DispatchError("no GitHub token: set RLGATE_GITHUB_TOKEN (Contents: read and write on the repository)")
    base = (api_url or os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    body = json.dumps({"event_type": event_type, "client_payload": dict(payload)}).encode("utf-8")
    request = urllib.request.Request(
        f"{base}/repos/{repo}/dispatches", data=body, method="POST",
        headers={"Accept": "application/vnd.github+json", "Authorization": f"Bearer {token}",
                 "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json",
                 "User-Agent": "rlgate-dispatch"})
    last = ""
    for attempt in range(max(1, attempts)):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                if response.status in (200, 204):
                    return
                last = f"HTTP {response.status}"
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")[:300]
            last = f"HTTP {error.code}: {detail}"
            if error.code < 500:
                break
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            last = f"cannot reach {base}: {getattr(error, 'reason', error)}"
        if attempt + 1 < attempts:
            sleep(2.0 ** attempt)
    raise DispatchError(f"repository_dispatch '{event_type}' to {repo} failed: {last}")


def send_checkpoint_ready(repo: str, checkpoint: str | Path, training_run: str | None = None, **kwargs: Any) -> None:
    """Send `checkpoint-ready` for one checkpoint folder (must exist: the gate runner reads it next)."""
    if not Path(checkpoint).exists():
        raise DispatchError(f"checkpoint {checkpoint} does not exist; send the event after it is written")
    send_options = {k: kwargs.pop(k) for k in ("token", "api_url", "attempts", "timeout", "sleep") if k in kwargs}
    send_dispatch(repo, checkpoint_ready_payload(checkpoint, training_run, **kwargs), **send_options)
