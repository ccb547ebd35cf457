"""Stands in for ``flux.job.JobID``: Flux job ids and their encodings (RFC 19).

A job id is a 64-bit FLUID.  Besides decimal it is written as F58 (base58
with a leading ``ƒ``), hex (``0x...``), dotted hex (``0000.0000.0000.0000``)
and the KVS directory form (``job.0000.0000.0000.0000``).  The mnemonic
``words`` form is not provided.
"""

from __future__ import annotations

import functools

_F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_F58_VALUE = {c: i for i, c in enumerate(_F58_ALPHABET)}
_F58_PREFIXES = ("ƒ", "f")
_MAX_ID = (1 << 64) - 1


def _encode_f58(value: int) -> str:
    digits = []
    while True:
        value, rem = divmod(value, 58)
        digits.append(_F58_ALPHABET[rem])
        if value == 0:
            break
    return "ƒ" + "".join(reversed(digits))


def _decode_f58(text: str) -> int:
    value = 0
    for char in text:
        if char not in _F58_VALUE:
            raise ValueError(f"invalid job id {text!r}: bad F58 digit {char!r}")
        value = value * 58 + _F58_VALUE[char]
    return value


def id_parse(jobid_str: str) -> int:
    """Parse a job id in any supported encoding and return it as an int."""
    text = jobid_str.strip()
    value: int | None = None
    try:
        if text.startswith(_F58_PREFIXES) and len(text) > 1:
            value = _decode_f58(text[1:])
        elif text.startswith("job."):
            value = _decode_dothex(text[4:], jobid_str)
        elif text.count(".") == 3:
            value = _decode_dothex(text, jobid_str)
        elif text.lower().startswith("0x"):
            value = int(text, 16)
        elif text.isdigit():
            value = int(text, 10)
    except ValueError as exc:
        raise ValueError(f"invalid job id {jobid_str!r}") from exc
    if value is None or value > _MAX_ID:
        raise ValueError(f"invalid job id {jobid_str!r}")
    return value


def _decode_dothex(text: str, original: str) -> int:
    parts = text.split(".")
    if len(parts) != 4 or any(len(p) != 4 for p in parts):
        raise ValueError(f"invalid job id {original!r}")
    return int("".join(parts), 16)


@functools.lru_cache(maxsize=65536)
def id_encode(jobid: int, encoding: str = "f58") -> str:
    """Encode *jobid* as ``dec``, ``hex``, ``dothex``, ``kvs`` or ``f58``."""
    jobid = int(jobid)
    if encoding == "dec":
        return str(jobid)
    if encoding == "hex":
        return f"0x{jobid:x}"
    if encoding == "dothex":
        h = f"{jobid:016x}"
        return ".".join(h[i : i + 4] for i in range(0, 16, 4))
    if encoding == "kvs":
        return "job." + id_encode(jobid, "dothex")
    if encoding == "f58":
        return _encode_f58(jobid)
    raise ValueError(f"unknown job id encoding {encoding!r}")


class JobID(int):
    """A job id: an ``int`` that also knows its other spellings."""

    def __new__(cls, value):
        if isinstance(value, str):
            value = id_parse(value)
        value = int(value)
        if value < 0 or value > _MAX_ID:
            raise ValueError(f"invalid job id {value}")
        self = super().__new__(cls, value)
        self._orig = str(value)
        return self

    def encode(self, encoding: str = "dec") -> str:
        """Return this id in *encoding* (see :func:`id_encode`)."""
        return id_encode(self, encoding)

    @property
    def dec(self) -> str:
        return self.encode("dec")

    @property
    def f58(self) -> str:
        return self.encode("f58")

    @property
    def f58plain(self) -> str:
        return "f" + self.f58[1:]

    @property
    def hex(self) -> str:
        return self.encode("hex")

    @property
    def dothex(self) -> str:
        return self.encode("dothex")

    @property
    def kvs(self) -> str:
        return self.encode("kvs")

    @property
    def orig(self) -> str:
        return self._orig

    def __str__(self) -> str:
        return self.f58

    def __repr__(self) -> str:
        return f"JobID({int(self)})"
