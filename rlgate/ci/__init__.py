"""CI integration: the logic behind the GitHub composite action (`action.yml`) and `rlgate init --github`.

Nothing here is imported by `import rlgate`; the action calls `python -m rlgate.ci STEP`.
"""
