"""Strict replay: the forward pass that validates, checkpoints, the report and
checking many runs at once."""
