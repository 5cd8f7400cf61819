"""Badcases back into training: failure taxonomy, clusters, next actions, benchmark versions.

Import the submodules directly (`rlgate.badcases.report`, `.export`, `.versioning`); this package imports
nothing heavy. Private splits are not badcases: rlgate.engine.private.
"""
