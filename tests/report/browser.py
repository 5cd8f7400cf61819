"""Open a report in the system's headless Chromium (Debian `chromium`) through playwright.

Shared by the browser test and `docs/examples/generate.py --screenshot`. Records every request
the page makes, every dialog and every Content-Security-Policy violation.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Installed before the page's own script runs: records CSP violations the page would hide.
WATCH_SCRIPT = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def chromium_path() -> str | None:
    """The system Chromium, if installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


@dataclass
class PageVisit:
    """What happened while the page was open."""

    title: str
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)


def visit(html_file: Path, screenshot: Path | None = None, actions: Any = None, *, width: int = 1360,
          height: int = 900, full_page: bool = True) -> PageVisit:
    """Load `html_file` from disk, run `actions(page) -> dict` and take a screenshot."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    url = html_file.resolve().as_uri()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=True)
            page = context.new_page()
            seen = PageVisit(title="")

            def on_request(request: Any) -> None:
                if request.url != url:
                    seen.requests.append(request.url)

            def on_dialog(dialog: Any) -> None:
                seen.dialogs.append(f"{dialog.type}: {dialog.message}")
                dialog.dismiss()

            def on_console(msg: Any) -> None:
                if msg.type == "error":
                    seen.console_errors.append(msg.text)

            page.on("request", on_request)
            page.on("dialog", on_dialog)
            page.on("console", on_console)
            page.on("pageerror", lambda err: seen.page_errors.append(str(err)))
            context.route("**/*", lambda route: route.continue_() if route.request.url == url else route.abort())
            page.add_init_script(WATCH_SCRIPT)
            page.goto(url, wait_until="load")
            page.wait_for_timeout(200)
            if actions is not None:
                seen.checks = actions(page) or {}
            page.wait_for_timeout(200)
            seen.title = page.title()
            seen.violations = page.evaluate("window.__violations")
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=full_page)
            return seen
        finally:
            browser.close()
