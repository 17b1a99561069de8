"""LangGraph's stored values, decoded without running anything they name.

LangGraph's serializer (``JsonPlusSerializer``) stores each value as a
``(type, bytes)`` pair: ``msgpack`` (the usual one), ``json`` (old
databases), ``null``, ``bytes``, ``bytearray``, and ``pickle`` where a
graph allowed it. Its msgpack uses extension types that name a Python class
(module and name) and how to rebuild it: a one-argument constructor, a
several-argument one, keyword arguments, a method, a pydantic model's
fields. LangGraph itself imports those classes to load a value; here no
class named in the data is ever imported and nothing is unpickled. Values
read as LangGraph's own JSON conversion renders them:

- an object stored by its fields (LangChain messages, pydantic models,
  dataclasses, named tuples) is the dict of those fields;
- one stored through a one-argument constructor or method (datetime,
  Decimal, set, Enum, ZoneInfo) is that argument, a UUID in its hyphenated
  form, a secret as ``***``;
- one stored through a several-argument constructor (date, timedelta, Path,
  ``Send``) is the list of its arguments;
- a NumPy array is its dtype, shape and size; bytes are their size (and
  base64 when short);
- a ``pickle`` value is opaque: its size and a warning, never loaded.

Whatever does not decode (a damaged extension, nesting past
:data:`MAX_DEPTH`, an unknown type) is a value that says so, with a warning:
never an exception.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]
import orjson

#: Nesting deeper than this (arrays, maps, extensions) is not decoded.
MAX_DEPTH = 200
#: Bytes shown as base64 up to this size; past it, only the size.
_SHOWN_BYTES = 256

_EXT_SINGLE_ARG = 0
_EXT_POS_ARGS = 1
_EXT_KW_ARGS = 2
_EXT_METHOD_SINGLE_ARG = 3
_EXT_PYDANTIC_V1 = 4
_EXT_PYDANTIC_V2 = 5
_EXT_NUMPY_ARRAY = 6
_EXT_DELTA_SNAPSHOT = 7
_EXT_NAMES = {
    _EXT_SINGLE_ARG: "one-argument constructor",
    _EXT_POS_ARGS: "positional constructor",
    _EXT_KW_ARGS: "keyword constructor",
    _EXT_METHOD_SINGLE_ARG: "one-argument method",
    _EXT_PYDANTIC_V1: "pydantic v1 model",
    _EXT_PYDANTIC_V2: "pydantic v2 model",
}
#: The class LangGraph writes to replace a channel's value, skipping its reducer.
OVERWRITE = "langgraph.types.Overwrite"


class Undecodable(Exception):
    """What the decoder could not read (caught here: never escapes)."""


@dataclass(slots=True)
class Decoded:
    """One stored value as read: the value rendered as JSON, the class of
    the outermost object if it was stored as one (``module.Name``), and what
    a person should know (a pickle not loaded, a damaged extension)."""

    value: Any
    cls: str | None = None
    warnings: list[str] = field(default_factory=list)


def _bytes(raw: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {"bytes": len(raw)}
    if len(raw) <= _SHOWN_BYTES:
        out["base64"] = base64.b64encode(raw).decode("ascii")
    return out


class _Reader:
    """One value's decoding: the ext hook, its depth and its warnings."""

    def __init__(self) -> None:
        self.depth = 0
        self.warnings: list[str] = []
        self.outer: str | None = None

    def unpack(self, raw: bytes) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH // 8:
                raise Undecodable(f"extensions nested more than {MAX_DEPTH // 8} deep")
            got = msgpack.unpackb(
                raw,
                ext_hook=self.ext,
                raw=False,
                strict_map_key=False,
                use_list=True,
                max_bin_len=len(raw),
                max_str_len=len(raw),
                max_array_len=len(raw),
                max_map_len=len(raw),
                max_ext_len=len(raw),
            )
        except Undecodable:
            raise
        except (RecursionError, msgpack.StackError):
            raise Undecodable(f"nested deeper than can be read ({MAX_DEPTH} levels)") from None
        except Exception as exc:  # msgpack's own errors: ValueError, ExtraData, ...
            said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise Undecodable(f"not valid msgpack ({said})") from None
        finally:
            self.depth -= 1
        return self.plain(got, 0)

    def plain(self, value: Any, depth: int) -> Any:
        """``value`` as JSON: keys as strings, bytes as their size."""
        if depth > MAX_DEPTH:
            raise Undecodable(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return {_key(k): self.plain(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.plain(v, depth + 1) for v in value]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _bytes(bytes(value))
        if isinstance(value, float) and value != value:
            return "NaN"
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        if isinstance(value, int) and not -(2**63) <= value < 2**64:
            return str(value)
        return value

    def ext(self, code: int, data: bytes) -> Any:
        """One msgpack extension, as LangGraph's JSON conversion renders it."""
        if code == _EXT_DELTA_SNAPSHOT:
            return self.unpack(data)
        if code == _EXT_NUMPY_ARRAY:
            meta = self.unpack(data)
            if not isinstance(meta, list) or len(meta) != 4:
                raise Undecodable("a NumPy array extension that is not (dtype, shape, order, data)")
            dtype, shape, _order, buf = meta
            size = buf.get("bytes") if isinstance(buf, dict) else None
            return {"ndarray": {"dtype": dtype, "shape": shape, "bytes": size}}
        if code not in _EXT_NAMES:
            self.warnings.append(f"msgpack extension type {code} is not LangGraph's: not decoded")
            return {"msgpack_ext": code, "bytes": len(data)}
        top = self.depth == 1
        parts = self.unpack(data)
        if (
            not isinstance(parts, list)
            or len(parts) < 3
            or not isinstance(parts[0], str)
            or not isinstance(parts[1], str)
        ):
            raise Undecodable(f"a {_EXT_NAMES[code]} extension that is not (module, name, ...)")
        module, name, arg = parts[0], parts[1], parts[2]
        if top:
            self.outer = f"{module}.{name}"
        if code == _EXT_SINGLE_ARG:
            if "secret" in name.lower():
                return "***"
            if (module, name) == ("uuid", "UUID") and isinstance(arg, str) and len(arg) == 32:
                return f"{arg[:8]}-{arg[8:12]}-{arg[12:16]}-{arg[16:20]}-{arg[20:]}"
            return arg
        if code == _EXT_POS_ARGS:
            return arg if isinstance(arg, list) else [arg]
        if code == _EXT_METHOD_SINGLE_ARG:
            return arg
        if not isinstance(arg, dict):
            raise Undecodable(f"a {_EXT_NAMES[code]} extension whose fields are not a map")
        return arg


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).decode("utf-8", "replace")
    try:
        return orjson.dumps(key).decode()
    except TypeError:
        return repr(key)


def decode_msgpack(raw: bytes) -> Decoded:
    """LangGraph's msgpack bytes as a JSON value (see the module)."""
    reader = _Reader()
    try:
        value = reader.unpack(raw)
    except Undecodable as why:
        return Decoded(
            {"undecodable": str(why), "bytes": len(raw)},
            None,
            [*reader.warnings, f"a stored value could not be decoded: {why}"],
        )
    cls = reader.outer if _outer_is_ext(raw) else None
    return Decoded(value, cls, reader.warnings)


def _outer_is_ext(raw: bytes) -> bool:
    """The value is itself an extension (fixext or ext), not a container of them."""
    return bool(raw) and raw[0] in (0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xC7, 0xC8, 0xC9)


def _lc_object(value: Any) -> Any:
    """LangChain's own serialization (``{"lc": 1, "type": "constructor",
    "id": [...], "kwargs": {...}}``, in old ``json`` values) as its fields."""
    if isinstance(value, dict):
        if value.get("lc") == 1 and value.get("type") == "constructor":
            kwargs = value.get("kwargs")
            return _lc_object(kwargs) if isinstance(kwargs, dict) else {}
        if value.get("lc") == 2 and value.get("type") == "constructor":
            return _lc2_object(value)
        if value.get("lc") == 1 and value.get("type") == "secret":
            return "***"
        return {k: _lc_object(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lc_object(v) for v in value]
    return value


def _lc2_object(value: dict[str, Any]) -> Any:
    """LangGraph's own ``json`` form of a Python object (``{"lc": 2, "type":
    "constructor", "id": [module, name], "method", "args", "kwargs"}``),
    rendered as its msgpack extensions are (see the module)."""
    args = value.get("args")
    kwargs = value.get("kwargs")
    ident = value.get("id") if isinstance(value.get("id"), list) else []
    if isinstance(kwargs, dict) and kwargs and not args:
        return _lc_object(kwargs)
    if not isinstance(args, list):
        return _lc_object(kwargs) if isinstance(kwargs, dict) else None
    if len(args) == 1:
        arg = args[0]
        if ident == ["uuid", "UUID"] and isinstance(arg, str) and len(arg) == 32:
            return f"{arg[:8]}-{arg[8:12]}-{arg[12:16]}-{arg[16:20]}-{arg[20:]}"
        return _lc_object(arg)
    return [_lc_object(a) for a in args]


def decode_json(raw: bytes) -> Decoded:
    """An old ``json`` value; LangChain's serialized objects as their fields."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        why = f"not valid JSON ({exc})"
        return Decoded({"undecodable": why, "bytes": len(raw)}, None, [f"a stored value: {why}"])
    cls = None
    if isinstance(value, dict) and value.get("lc") == 1 and isinstance(value.get("id"), list):
        cls = ".".join(str(p) for p in value["id"])
    try:
        return Decoded(_lc_object(value), cls)
    except RecursionError:
        why = f"nested more than {MAX_DEPTH} levels deep"
        return Decoded({"undecodable": why, "bytes": len(raw)}, None, [f"a stored value: {why}"])


def decode_typed(kind: str | None, raw: bytes | memoryview | str | None) -> Decoded:
    """One ``(type, bytes)`` pair as the checkpointer stored it."""
    if raw is None:
        raw = b""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    raw = bytes(raw)
    if kind == "null" or kind == "empty":
        return Decoded(None)
    if kind == "msgpack":
        return decode_msgpack(raw)
    if kind == "json":
        return decode_json(raw)
    if kind in ("bytes", "bytearray"):
        return Decoded(_bytes(raw))
    if kind == "pickle":
        return Decoded(
            {"pickle": len(raw)},
            None,
            [f"a value stored with pickle ({len(raw)} bytes) is never loaded: shown as opaque"],
        )
    return Decoded(
        {"undecodable": f"serialization type {kind!r}", "bytes": len(raw)},
        None,
        [f"a value stored as {kind!r}, a type LangGraph does not write: not decoded"],
    )
