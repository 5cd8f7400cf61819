"""The application layer: rlgate's use cases, one module each, above every library layer and below the CLI.

- `check`: `rlgate check`: evaluate the baseline and the candidate, then decide (`runs` holds the run steps
  `rlgate eval` shares).
- `gate`: `rlgate gate`: read stored results, then decide.
- `decide`: the decision both end in: the gate sources (`sources`), the engine, badcases, the project
  history and every report, summary.md included.
- `history_report`: `rlgate history --html`'s trend page.

The CLI parses arguments and calls these; nothing here parses arguments or prints.
"""
