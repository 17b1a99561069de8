"""``replay-tui receive``: an OTLP/HTTP receiver writing what it is sent as a
trace file that the app follows. :mod:`.command` is the command,
:mod:`.server` the bounded HTTP server, :mod:`.body` the request's head and
body, each part read within its limit."""
