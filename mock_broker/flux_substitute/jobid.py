"""Stands in for ``flux.job.JobID``: Flux job ids and their encodings (RFC 19).

A job id is a 64-bit FLUID.  Besides decimal it is written as F58 (base58
with a leading ``ƒ``, or ``f`` where the locale is not UTF-8 or
``FLUX_F58_FORCE_ASCII`` is set), hex (``0x...``), dotted hex
(``0000.0000.0000.0000``) and the KVS directory form
(``job.0000.0000.0000.0000``).  Parsing and encoding follow libflux's
``flux_job_id_parse()`` and ``flux_job_id_encode()`` as flux-python 0.88.0
calls them, errors included:

- :func:`id_parse` raises :class:`OSError` (``EINVAL``, or ``ERANGE`` for a
  number past 64 bits) for a string it cannot read, and
  :class:`~._binding.InvalidArguments` (a ValueError) for an argument that
  is not a string or bytes; :class:`JobID` turns the OSError into
  :class:`ValueError`.  Leading blanks are skipped everywhere, trailing
  blanks only after a decimal or hex number.
- ``JobID(n)`` accepts any ``int`` unchecked (a negative or too large one
  fails when encoded, with :class:`OverflowError` as from cffi), but not a
  float or other number type.
- :func:`id_encode` matches the encoding name case-insensitively, treats
  ``None`` as ``"dec"`` and raises :class:`OSError` ``EPROTO`` for an
  unknown name.

The mnemonic ``words`` and ``emoji`` forms are not available here: they
need libflux's word and emoji tables.  Asking for them, or parsing a string
that looks like one, raises :class:`NotImplementedError`.
"""

from __future__ import annotations

import errno
import functools
import locale
import os
import re

from mock_broker.flux_substitute._binding import (
    c_string_arg,
    c_uint64,
    errno_error,
)

__all__ = ["JobID", "id_encode", "id_parse"]

_F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_F58_VALUE = {ord(c): i for i, c in enumerate(_F58_ALPHABET)}
_F58_PREFIXES = ("ƒ".encode(), b"f")
_F58_MAX_DIGITS = 12
_U64 = 2**64
_C_SPACE = b" \t\n\v\f\r"
# a valid mnemonic id is six words of letters
_WORD_RE = re.compile(rb"[A-Za-z]+")
_HEX_DIGITS = b"0123456789abcdefABCDEF"


def _unsupported(form: str) -> NotImplementedError:
    return NotImplementedError(
        f"the {form} job id encoding needs libflux's tables, which the "
        "substitute does not have"
    )


def id_parse(jobid_str) -> int:
    """Parse a job id in any supported encoding and return it as an int.

    Raises :class:`OSError` where ``flux_job_id_parse()`` fails.
    """
    data = c_string_arg(jobid_str, "flux_job_id_parse")
    if not data:  # NULL or an empty string
        raise errno_error(errno.EINVAL)
    data = data.lstrip(_C_SPACE)
    if data.startswith(b"job."):
        data = data[4:]
    return _fluid_parse(data)


def _fluid_parse(s: bytes) -> int:
    if not s:
        raise errno_error(errno.EINVAL)
    s = s.lstrip(_C_SPACE)
    # the type is detected in this order: '.' anywhere means dotted hex,
    # then '-' anywhere means words, then an F58 prefix, then emoji
    if b"." in s:
        return _dothex_decode(s)
    if b"-" in s:
        if len(_WORD_RE.findall(s)) >= 6:
            raise _unsupported("words")
        raise errno_error(errno.EINVAL)  # mn_decode() cannot make 8 bytes
    for prefix in _F58_PREFIXES:
        if s.startswith(prefix):
            return _f58_decode(s[len(prefix) :])
    if 4 <= len(s) <= 28 and len(s) % 4 == 0 and s.startswith(b"\xf0\x9f"):
        raise _unsupported("emoji")
    return _integer_decode(s)


def _f58_decode(digits: bytes) -> int:
    if not digits or len(digits) > _F58_MAX_DIGITS:
        raise errno_error(errno.EINVAL)
    value = 0
    for byte in digits:
        digit = _F58_VALUE.get(byte)
        if digit is None:
            raise errno_error(errno.EINVAL)
        value = value * 58 + digit
    return value % _U64  # libflux sums in 64 bits, wrapping


def _integer_decode(s: bytes) -> int:
    # strtoull(s, &end, base) then only blanks may follow
    base = 16 if s.startswith(b"0x") else 10
    pos = 0
    negative = False
    if s[:1] in (b"+", b"-"):
        negative = s[:1] == b"-"
        pos = 1
    if base == 16 and s[pos : pos + 2].lower() == b"0x" and s[pos + 2 : pos + 3]:
        if s[pos + 2] in _HEX_DIGITS:
            pos += 2
    allowed = _HEX_DIGITS if base == 16 else b"0123456789"
    end = pos
    while end < len(s) and s[end] in allowed:
        end += 1
    if end == pos:
        end = 0  # no digits: nothing was read
        value = 0
    else:
        value = int(s[pos:end], base)
        if value >= _U64:
            raise errno_error(errno.ERANGE)
        if negative:
            value = -value % _U64
    if s[end:].strip(_C_SPACE):
        raise errno_error(errno.EINVAL)
    return value


def _scan_hex(s: bytes, pos: int) -> tuple[int, int] | None:
    """Read one ``%4x`` conversion of sscanf(): (unsigned int, new pos)."""
    while pos < len(s) and s[pos] in _C_SPACE:
        pos += 1
    budget = 4
    negative = False
    if pos < len(s) and s[pos : pos + 1] in (b"+", b"-"):
        negative = s[pos : pos + 1] == b"-"
        pos += 1
        budget -= 1
    start = pos
    if budget >= 2 and s[pos : pos + 2].lower() == b"0x":
        pos += 2
        budget -= 2
    end = pos
    while end < len(s) and budget and s[end] in _HEX_DIGITS:
        end += 1
        budget -= 1
    if end == pos:
        if pos > start:  # "0x" alone reads as 0
            return 0, pos
        return None
    value = int(s[pos:end], 16)
    if negative:
        value = -value
    return value % 2**32, end


def _dothex_decode(s: bytes) -> int:
    # sscanf(s, "%4x.%4x.%4x.%4x%n") must convert all four and reach the end
    value = 0
    pos = 0
    for n in range(4):
        if n:
            if s[pos : pos + 1] != b".":
                raise errno_error(errno.EINVAL)
            pos += 1
        scanned = _scan_hex(s, pos)
        if scanned is None:
            raise errno_error(errno.EINVAL)
        part, pos = scanned
        value |= part << (16 * (3 - n))
    if pos != len(s):
        raise errno_error(errno.EINVAL)
    return value % _U64


def _f58_prefix(plain: bool) -> str:
    # libflux uses "ƒ" only in a UTF-8 locale without FLUX_F58_FORCE_ASCII
    if plain or "FLUX_F58_FORCE_ASCII" in os.environ:
        return "f"
    try:
        utf8 = locale.nl_langinfo(locale.CODESET) == "UTF-8"
    except (AttributeError, ValueError):  # pragma: no cover - no nl_langinfo
        utf8 = False
    return "ƒ" if utf8 else "f"


@functools.lru_cache(maxsize=65536)
def _encode_cached(jobid: int, kind: bytes) -> str:
    if kind == b"hex":
        return f"0x{jobid:x}"
    if kind == b"dothex":
        h = f"{jobid:016x}"
        return ".".join(h[i : i + 4] for i in range(0, 16, 4))
    if kind == b"kvs":
        return "job." + _encode_cached(jobid, b"dothex")
    # f58 digits, without the prefix (which depends on the locale)
    digits = []
    while True:
        jobid, rem = divmod(jobid, 58)
        digits.append(_F58_ALPHABET[rem])
        if jobid == 0:
            break
    return "".join(reversed(digits))


def id_encode(jobid, encoding="f58") -> str:
    """Encode *jobid* as ``dec``, ``hex``, ``dothex``, ``kvs``, ``f58`` or
    ``f58plain`` (the name is matched case-insensitively; None means
    ``dec``).

    ``int(jobid)`` must fit 64 bits unsigned (else :class:`OverflowError`);
    an unknown encoding raises :class:`OSError` ``EPROTO``.
    """
    value = c_uint64(int(jobid))
    name = c_string_arg(encoding, "flux_job_id_encode")
    kind = b"dec" if name is None else name.lower()
    if kind == b"dec":
        return str(value)
    if kind in (b"hex", b"dothex", b"kvs"):
        return _encode_cached(value, kind)
    if kind in (b"f58", b"f58plain"):
        return _f58_prefix(kind == b"f58plain") + _encode_cached(value, b"f58")
    if kind in (b"words", b"emoji"):
        raise _unsupported(kind.decode())
    raise errno_error(errno.EPROTO)


class JobID(int):
    """A job id: an ``int`` that also knows its other spellings.

    ``JobID(value)`` takes an ``int`` as is, another JobID (re-parsed from
    its original string), or a string or bytes in any supported encoding;
    a string that does not parse raises :class:`ValueError`.
    """

    def __new__(cls, value):
        if isinstance(value, JobID):
            return cls(value.orig_str)
        if isinstance(value, int):
            jobid = value
        else:
            try:
                jobid = id_parse(value)
            except OSError:
                raise ValueError(f"{value} is not a valid Flux jobid") from None
        self = super().__new__(cls, jobid)
        #: The value this JobID was made from, as a string.
        self.orig_str = str(value)
        return self

    def encode(self, encoding: str = "dec") -> str:
        """Return this id in *encoding* (see :func:`id_encode`)."""
        return id_encode(self, encoding)

    @property
    def dec(self) -> str:
        """Decimal form."""
        return self.encode()

    @property
    def f58(self) -> str:
        """RFC 19 F58 form (``ƒ`` prefix in a UTF-8 locale, else ``f``)."""
        return self.encode("f58")

    @property
    def f58plain(self) -> str:
        """RFC 19 F58 form with the ASCII ``f`` prefix."""
        return self.encode("f58plain")

    @property
    def hex(self) -> str:
        """``0x``-prefixed hexadecimal form."""
        return self.encode("hex")

    @property
    def dothex(self) -> str:
        """Dotted hexadecimal form."""
        return self.encode("dothex")

    @property
    def words(self) -> str:
        """Mnemonic form: not available in the substitute."""
        return self.encode("words")

    @property
    def emoji(self) -> str:
        """Emoji form: not available in the substitute."""
        return self.encode("emoji")

    @property
    def kvs(self) -> str:
        """KVS directory form, ``job.`` and the dotted hex."""
        if 0 <= self < _U64:  # what fits a uint64_t: read once per started job
            return _encode_cached(int(self), b"kvs")
        return self.encode("kvs")

    @property
    def orig(self) -> str:
        """The string this JobID was made from."""
        return self.orig_str

    def __str__(self) -> str:
        return self.encode("f58")

    def __repr__(self) -> str:
        return f"JobID({self.dec})"
