"""The typer command-line interface: parse arguments, call the library, map outcomes to exit codes."""
