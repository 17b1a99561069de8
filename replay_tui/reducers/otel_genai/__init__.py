"""The ``otel_genai`` rules (``--reducer otel_genai``): an agent's turns from
its OpenTelemetry GenAI trace.

:mod:`.rules` folds the trace's records into a store of spans; the turns are
derived from it by :mod:`.turns`, from the spans' facts (:mod:`.spans`), the
tool calls (:mod:`.tools`), the turns' order across traces (:mod:`.order`),
the messages of every convention (:mod:`.messages`, their content blocks
:mod:`.blocks`, OpenInference's attributes :mod:`.openinference`) and the
logs no one model call can claim (:mod:`.attribution`); :mod:`.words` says
values in a few words. Their ``rules_sha256`` covers
every one of these modules.
"""

from replay_tui.reducers.otel_genai.rules import REDUCER, OtelGenAIRules, span_seconds, status_word

__all__ = ["REDUCER", "OtelGenAIRules", "span_seconds", "status_word"]
