"""Reading what runs are written in: the envelope, ledgers (plain, gzip,
converted), receipts, budgets, Temporal histories, locating a run, and the
synthetic-run writer."""
