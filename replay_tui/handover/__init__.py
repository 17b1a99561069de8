"""Handing a run over: the report document and bookmarks."""
