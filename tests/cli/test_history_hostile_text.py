"""`rlgate history` on records whose names carry text no UTF-8 file takes (a lone surrogate) or a terminal acts on."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.store.open import open_history

runner = CliRunner()


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite"
    with open_history(path) as db:
        for step, name in enumerate(["ckpt\udcff", "ckpt\x00nul", "ckpt\u202eevil", "ck pt/ü\nx"]):
            db.record("run", step, name, {"t/acc\udcff": 0.5 + step / 10, "t/n\x00": 1.0}, "release",
                      extra={"note": "a\udc80b"}, contract="c")
    return path


def test_html_export_and_import_keep_a_lone_surrogate_in_a_metric_name_visible(tmp_path: Path) -> None:
    """Metric names and extras are stored as JSON, which keeps a surrogate's escape: read back, it was the one
    string no page or export could write (UnicodeEncodeError, a traceback and no file)."""
    store = _store(tmp_path)
    result = runner.invoke(app, ["history", "--history", str(store), "--html", str(tmp_path / "h.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "h.html").read_text(encoding="utf-8")
    assert "t/acc\\udcff" in page and "ckpt\\udcff" in page
    result = runner.invoke(app, ["history", "--history", str(store), "--export", str(tmp_path / "e.json")])
    assert result.exit_code == 0, result.output
    exported = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    assert {"t/acc\\udcff", "t/n\x00"} <= set(exported["checkpoints"][0]["metrics"])
    assert exported["checkpoints"][0]["extra"] == {"note": "a\\udc80b"}
    copy = tmp_path / "copy.sqlite"
    result = runner.invoke(app, ["history", "--history", str(copy), "--import", str(tmp_path / "e.json")])
    assert result.exit_code == 0, result.output
    with open_history(copy) as db, open_history(store) as original:
        assert db.history("run") == original.history("run")
    result = runner.invoke(app, ["history", "--history", str(store), "--json"])
    assert result.exit_code == 0, result.output
    assert "t/acc\\\\udcff" in result.output


def test_the_terminal_listing_shows_odd_names_escaped_one_line_per_checkpoint(tmp_path: Path) -> None:
    """A right-to-left override or escape sequence in a checkpoint path acted on the terminal (or was stripped
    from a pipe), and a newline in one split its row in two."""
    store = _store(tmp_path)
    with open_history(store) as db:
        db.record("run\x1b[2J", 9, "ck\x1b[31mred", {"t/acc": 0.1}, "block", contract="c")
    result = runner.invoke(app, ["history", "--history", str(store)])
    assert result.exit_code == 0, result.output
    assert "ckpt\\u202eevil" in result.output and "ck pt/ü\\nx" in result.output
    assert "training run run\\u001b[2J" in result.output and "ck\\u001b[31mred" in result.output
    assert not any(ch in result.output for ch in "\u202e\x1b")
    rows = [line for line in result.output.splitlines() if line.lstrip().startswith("step")]
    assert len(rows) == 5 and all("release" in r or "block" in r for r in rows)


def test_the_trend_page_shows_odd_names_escaped_in_the_charts_tooltips_too(tmp_path: Path) -> None:
    """The table escaped a right-to-left override; each chart point's tooltip (an SVG <title>) had it raw."""
    store = _store(tmp_path)
    result = runner.invoke(app, ["history", "--history", str(store), "--html", str(tmp_path / "h.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "h.html").read_text(encoding="utf-8")
    assert "<title>ckpt\\u202eevil" in page and "\u202e" not in page and "\x00" not in page


def test_a_path_of_non_utf8_bytes_is_printed_where_output_is_strict_utf8(tmp_path: Path) -> None:
    """With PYTHONIOENCODING=utf-8 (common in CI) Python's stdout refuses lone surrogates, which is how a path of
    non-UTF-8 bytes reaches rlgate: printing it was a traceback and exit 1 after the work was done."""
    import os
    import subprocess
    import sys

    import rlgate

    store = tmp_path / os.fsdecode(b"h-\xff.sqlite")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(Path(rlgate.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-m", "rlgate.cli.app", "history", "--history", str(store)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"h-\\udcff.sqlite" in done.stdout and b"Traceback" not in done.stderr
