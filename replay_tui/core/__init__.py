"""The lowest layer: errors, text made safe for a terminal, strict JSON, words
and process supervision."""
