"""What the app shows about a run, computed without any UI toolkit: rows and
the view of one line."""
