"""How the engine calls rules: every call goes through one caller
(:mod:`.caller`), and rules not built in are watched (:mod:`.guard`): they
must return in time and leave the event they are given as it was."""
