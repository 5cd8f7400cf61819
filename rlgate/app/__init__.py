"""The application layer: rlgate's use cases, one module each, above every library layer and below the CLI.

- `check`: `rlgate check`: evaluate the baseline and the candidate, then decide (`runs` holds the run steps
  `rlgate eval` shares: `eval_contract`).
- `gate`: `rlgate gate`: read stored results, then decide.
- `decide`: the decision both end in: the gate sources (`sources`, a registry), the engine, badcases, the
  project history (`record`) and every report, summary.md included.
- `monitor`, `contamination`: `rlgate monitor` and `rlgate contamination`.
- `history_report`: `rlgate history --html`'s trend page.

The CLI parses arguments, calls these and prints what they return; nothing here parses arguments or prints.
"""
