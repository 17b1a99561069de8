"""LangGraph checkpointer databases (SQLite, PostgreSQL) as runs: a thread's
checkpoints and the writes between them, as events."""
