"""Reading what runs are written in: the envelope, ledgers (plain, gzip,
converted), receipts, budgets, Temporal histories, agent sessions, locating a
run. (The sample runs and sessions the project writes are :mod:`replay_tui.synth`.)"""
