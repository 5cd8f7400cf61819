"""Badcases back into training: failure taxonomy, clusters, next actions, contamination, private splits.

Import the submodules directly (`rlgate.badcases.report`, `.export`, `.contamination`,
`.discipline`, `.versioning`); this package imports nothing heavy.
"""
