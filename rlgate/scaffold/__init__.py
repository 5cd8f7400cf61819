"""What `rlgate init` writes into a new project: a starter contract and, with --github, the workflow.

Below the CLI and apart from `rlgate.ci` (the action's runtime, which sits above the CLI and calls it),
so `rlgate init` never imports CI code.
"""
