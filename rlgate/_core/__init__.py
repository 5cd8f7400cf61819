"""The ground floor every layer stands on: errors, atomic files, JSON I/O and text safety (private).

Nothing here knows a contract, a harness or a report; every package may import it and it imports no
other rlgate package. Users import the public names from `rlgate` (`rlgate.InputError`).

- `errors`: `InputError` (bad input: one located message, exit 2) and `MissingExtraError`;
- `files`: atomic writes;
- `jsonio`: JSON / JSON Lines reading with located errors, size and nesting bounds;
- `text`: making untrusted text safe for display, storage and CI annotations;
- `lazy`: lazy public names of packages.
"""
