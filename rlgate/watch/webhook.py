"""Tell humans: a Slack-compatible incoming-webhook message (`{"text": ...}`) when the signal stops the run.

Slack, Mattermost, Rocket.Chat and Discord's `/slack` endpoint accept this body. A failed post is returned
as a note for the watcher's log and never stops the watcher (the control file is the signal that counts).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from rlgate.watch.control import ControlSignal


def message(signal: ControlSignal, training_run: str) -> dict[str, str]:
    """The message body: what the run must do and why, in Slack's mrkdwn."""
    back = f" to step {signal.rollback_to_step} (`{signal.rollback_to}`)" if signal.action == "rollback" else ""
    lines = [f"*rlgate watch*: training run `{training_run}` -> *{signal.action}*{back} after gating step "
             f"{signal.step}", *(f"• {reason}" for reason in signal.reasons)]
    return {"text": "\n".join(lines)}


def post(url: str, body: dict[str, str], timeout: float = 10.0) -> str | None:
    """POST the JSON body; None when accepted, else what went wrong (one line)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "rlgate-watch"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return None if 200 <= response.status < 300 else f"HTTP {response.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        return f"cannot reach the webhook: {getattr(error, 'reason', error)}"
