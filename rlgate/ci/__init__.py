"""CI integration: the logic behind the GitHub composite action (`action.yml`).

`rlgate init --github` lives in `rlgate.scaffold` (below the CLI); this package sits above the CLI.

Nothing here is imported by `import rlgate`; the action calls `python -m rlgate.ci STEP`.
"""
