"""The ledger file: an index of line offsets, lines read on demand
(:mod:`.indexed`), and the ledgers converted into such a file as they are
scanned, from a Temporal history, an OTel export or a gzip file
(:mod:`.converted`)."""

from replay_tui.formats.ledger.converted import GZIP_MAGIC, ConvertedLedger, GzipLedger
from replay_tui.formats.ledger.indexed import (
    BIG_LINE,
    UTF8_BOM,
    Ledger,
    LedgerRewritten,
    sniff_encoding,
)

__all__ = [
    "BIG_LINE",
    "GZIP_MAGIC",
    "UTF8_BOM",
    "ConvertedLedger",
    "GzipLedger",
    "Ledger",
    "LedgerRewritten",
    "sniff_encoding",
]
