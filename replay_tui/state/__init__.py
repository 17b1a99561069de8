"""States and their changes: persistent (frozen) values, diffs, canonical JSON,
paths, the patch log and state history."""
