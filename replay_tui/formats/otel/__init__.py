"""OpenTelemetry traces as a source: the shapes they are exported in, read
as one normal form (:mod:`.load`); a trace file as one event per record, in
time order (:mod:`.source`); a file of the Collector's JSON lines followed as
it grows (:mod:`.lines`); and OTLP/protobuf requests decoded into the
OTLP/JSON the Collector writes (:mod:`.proto`, for ``replay-tui receive``)."""
