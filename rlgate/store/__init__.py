"""Persistent project state: the generation cache and the checkpoint history (SQLite or PostgreSQL).

Open the history with `rlgate.store.open.open_history(url_or_path)`; every backend implements
`rlgate.store.protocol.HistoryStore`.
"""
