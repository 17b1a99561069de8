"""The ``langgraph`` rules (``--reducer langgraph``): a LangGraph thread's
state after each write and checkpoint, every superstep proved from its
writes (:mod:`.rules`), through reducers inferred per channel (:mod:`.channels`)."""

from replay_tui.reducers.langgraph.rules import REDUCER, LangGraphRules

__all__ = ["REDUCER", "LangGraphRules"]
