"""Sets of non-negative integer ids in the RFC 22 string form.

This module stands in for ``flux.idset`` when libflux is not available.  It
offers the same public names and behaviour as the libflux-backed module of
flux-python 0.88.0, errors included, so code written against it (the
wheel's ``Rv1Set``, ``Rv1Pool`` and friends, or a scheduler of your own)
runs unchanged, and code that fails here fails the same way on a real
broker.

An :class:`IDset` is an unordered set of ids such as broker ranks or core
indices.  Its string form lists the ids in ascending order, separated by
commas, optionally compressed into ``lo-hi`` ranges and optionally wrapped
in square brackets::

    >>> ids = IDset("0-3,7")
    >>> len(ids), 2 in ids, list(ids)
    (5, True, [0, 1, 2, 3, 7])
    >>> ids.encode(IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS)
    '[0-3,7]'

Parsing is as strict as libflux's ``idset_decode()``: ids must ascend with no
repeats, carry no leading zeros, and a range must have ``hi > lo``.  Like
libflux, empty elements (``"1,,2"``, a trailing comma) are skipped, the
string ends at its first NUL, and a number too large for a C ``unsigned
int`` is cut to its low 32 bits (so ``"4294967296"`` decodes as ``0``).

What the binding does with odd arguments, and so what this module does:

- ``IDset == x`` and :meth:`IDset.equal` raise :class:`TypeError` unless
  *x* is an :class:`IDset`; a string or a list is never converted.
- ``IDset(True)``, ``IDset([1.0])`` and ``IDset([1, 1])`` raise
  :class:`ValueError`: the binding joins the items' ``str()`` with commas
  and ``idset_decode()`` refuses the result.
- :meth:`IDset.set` of an id libidset cannot hold raises :class:`OSError`
  (``EINVAL`` for ``2**32 - 2`` and ``2**32 - 1``, ``ERANGE`` above
  ``2**31 - 1``); an id of ``2**32`` or more given to :meth:`IDset.set`,
  :meth:`IDset.clear`, :meth:`IDset.test` (so ``in``) or :meth:`IDset.next`
  raises :class:`OverflowError`, as cffi does for an ``unsigned int``.
- Encoding flags are not checked until a set is encoded: then a flag other
  than ``IDSET_FLAG_RANGE``/``IDSET_FLAG_BRACKETS`` raises
  :class:`RuntimeError` (``idset_encode()`` returns NULL) and a non-integer
  raises :class:`TypeError`.
"""

from __future__ import annotations

import bisect
import errno
import functools
import numbers
import re
from collections.abc import Iterable, Iterator
from typing import Union

from mock_broker.flux_substitute._binding import c_int, c_uint, errno_error

__all__ = [
    "IDSET_FLAG_BRACKETS",
    "IDSET_FLAG_RANGE",
    "IDSET_INVALID_ID",
    "IDset",
    "IDsetIterator",
    "decode",
]

#: Returned by :meth:`IDset.first`, :meth:`IDset.next` and
#: :meth:`IDset.last` when there is no such id (libidset: ``UINT_MAX - 1``).
IDSET_INVALID_ID = 2**32 - 2

#: Encoding flag: wrap the string in ``[...]`` when it holds two or more ids.
IDSET_FLAG_BRACKETS = 2

#: Encoding flag: compress consecutive ids into ``lo-hi`` ranges.
IDSET_FLAG_RANGE = 4

_UINT_MAX = 2**32 - 1
_ULONG_MAX = 2**64 - 1
# libidset refuses to grow a set's universe past INT_MAX + 1 slots, so the
# largest id real flux can hold is INT_MAX.
_MAX_ID = 2**31 - 1
_ENCODE_FLAGS = IDSET_FLAG_BRACKETS | IDSET_FLAG_RANGE

# One comma-separated element: an id or a range.  ASCII digits only, and no
# leading zero except for "0" itself (RFC 22).  A whole body is a comma list
# of such elements, where empty ones are skipped as libidset's strtok does.
_ELEMENT = r"(?:0|[1-9][0-9]*)(?:-(?:0|[1-9][0-9]*))?"
_ELEMENT_RE = re.compile(_ELEMENT)
_BODY_RE = re.compile(rf"(?:{_ELEMENT})?(?:,(?:{_ELEMENT})?)*")

IDsetLike = Union["IDset", str, int, Iterable[int]]


def _encode_flags(flags) -> int:
    """Vet encoding *flags* the way ``idset_encode()`` receives them."""
    # cffi converts the Python value to a C int: TypeError / OverflowError
    value = c_int(flags)
    if value & ~_ENCODE_FLAGS:
        # libidset fails with EINVAL and returns NULL, and flux-python's
        # ffi.string(NULL) raises RuntimeError
        raise RuntimeError(
            "cannot use string() on <cdata 'char *' NULL>: idset_encode() "
            f"rejected flags {flags!r} (EINVAL); valid flags combine "
            "IDSET_FLAG_RANGE and IDSET_FLAG_BRACKETS"
        )
    return value


def _decode(text: str) -> tuple[list[int], list[int]]:
    """Turn an RFC 22 string into sorted, disjoint, non-adjacent ranges."""
    if not text.isascii():
        # the binding encodes strictly: a lone surrogate raises
        # UnicodeEncodeError (a ValueError) before libidset is reached
        text.encode("utf-8")
    if "\0" in text:
        text = text.partition("\0")[0]  # C reads up to the first NUL
    los, his = _decode_cached(text)
    return list(los), list(his)


@functools.lru_cache(maxsize=8192)
def _decode_cached(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    # Schedulers parse the same few strings ("0-3", "0") over and over.
    los, his = _decode_uncached(text)
    return tuple(los), tuple(his)


def _invalid(text: str, why: str) -> ValueError:
    # flux-python: ValueError(f"IDset(): Invalid argument: {arg}")
    return ValueError(f"IDset(): Invalid argument: {text} ({why})")


def _decode_uncached(text: str) -> tuple[list[int], list[int]]:
    body = text
    if len(body) >= 2 and body[0] == "[" and body[-1] == "]":
        body = body[1:-1]
    if "[" in body or "]" in body:
        raise _invalid(text, "mismatched or nested brackets")
    # Validating the whole body with one regex keeps long rank lists fast;
    # only on failure is the culprit element hunted down for the message.
    if _BODY_RE.fullmatch(body) is None:
        bad = next(t for t in body.split(",") if t and not _ELEMENT_RE.fullmatch(t))
        raise _invalid(text, f"cannot parse {bad!r}")
    pairs: list[tuple[int, int]] = []
    maxid = -1
    truncated = False
    for token in body.split(","):
        if not token:
            continue
        lo_text, dash, hi_text = token.partition("-")
        number = int(lo_text)
        if number > _ULONG_MAX:
            raise _invalid(text, f"{token!r} overflows strtoul()")
        lo = hi = number & _UINT_MAX  # libidset keeps it in an unsigned int
        truncated = truncated or lo != number
        if dash:
            number = int(hi_text)
            if number > _ULONG_MAX:
                raise _invalid(text, f"{token!r} overflows strtoul()")
            if number <= lo:
                raise _invalid(text, f"range {token!r} does not ascend")
            hi = number & _UINT_MAX
            truncated = truncated or hi != number
        if lo <= maxid:
            raise _invalid(text, f"{token!r} repeats or is out of order")
        # idset_range_set(): ids UINT_MAX - 1 and UINT_MAX are invalid, a
        # range given high-to-low is swapped, and the set cannot grow past
        # _MAX_ID
        if lo >= IDSET_INVALID_ID or hi >= IDSET_INVALID_ID:
            raise _invalid(text, f"{token!r} holds an invalid id")
        a, b = (lo, hi) if lo <= hi else (hi, lo)
        if b > _MAX_ID:
            raise _invalid(text, f"{b} exceeds the largest id {_MAX_ID}")
        pairs.append((a, b))
        maxid = hi
    if truncated:
        # cut-down numbers can break the ascending order; sort so that
        # _coalesce() sees the ranges in order (overlaps merge there)
        pairs.sort()
    return _coalesce(pairs)


def _from_iterable(items: Iterable) -> tuple[list[int], list[int]]:
    """Convert an iterable as flux-python does: sort, join with commas, decode."""
    ids = sorted(items)  # a TypeError from mixed types propagates
    if all(type(i) is int for i in ids) and (
        not ids or (ids[0] >= 0 and ids[-1] <= _MAX_ID)
    ):
        # the common case, without building the string
        for a, b in zip(ids, ids[1:], strict=False):
            if a == b:
                raise _invalid(
                    ",".join(map(str, ids)), f"{a!r} repeats or is out of order"
                )
        return _coalesce((i, i) for i in ids)
    # bools ("True"), floats ("1.0"), negative or huge ids, strings...
    return _decode(",".join(str(i) for i in ids))


def _size(los: list[int], his: list[int]) -> int:
    return sum(his) - sum(los) + len(los)


def _coalesce(pairs: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Merge (lo, hi) pairs sorted by lo, joining overlaps and neighbours."""
    los: list[int] = []
    his: list[int] = []
    for lo, hi in pairs:
        if his and lo <= his[-1] + 1:
            if hi > his[-1]:
                his[-1] = hi
        else:
            los.append(lo)
            his.append(hi)
    return los, his


def _valid_id(i: int) -> bool:
    # libidset's valid_id(): UINT_MAX and IDSET_INVALID_ID are never ids
    return i < IDSET_INVALID_ID


class IDset:
    """A mutable set of non-negative integer ids (RFC 22).

    ``IDset(arg)`` accepts an RFC 22 string (``"1,3-5"``, ``"[0-3]"``,
    ``""``), a single int, an iterable, or another :class:`IDset`.  As in
    flux-python, an int or iterable is converted through its string form:
    the items are sorted, their ``str()`` joined with commas and decoded,
    so an iterable of ints or of RFC 22 strings works, while a negative
    id, a repeated id, a bool or a float raises :class:`ValueError`.  A
    malformed string raises :class:`ValueError`; an argument of any other
    type (``None``, a float) raises :class:`TypeError`.

    *flags* sets how :func:`str` renders the set (see :meth:`encode`); the
    default gives ranges without brackets, e.g. ``"0-3,7"``.  Flags are
    only checked when the set is encoded.  Results of :meth:`copy` and of
    the set operations always start with the default flags, as with
    flux-python.
    """

    __slots__ = ("_lo", "_hi", "_count", "_version", "default_flags", "__dict__")
    __hash__ = None  # type: ignore[assignment]  # mutable, and defines __eq__

    def __init__(self, arg: IDsetLike = "", flags: int = IDSET_FLAG_RANGE) -> None:
        if isinstance(arg, IDset):
            # flux-python copies through str(arg), encoded with arg's flags
            _encode_flags(arg.default_flags)
            los, his = list(arg._lo), list(arg._hi)
        elif isinstance(arg, str):
            los, his = _decode(arg)
        elif isinstance(arg, Iterable):
            los, his = _from_iterable(arg)
        elif isinstance(arg, int):
            los, his = _decode(str(arg))  # bool too: "True" is refused
        else:
            los, his = _decode(self._text_of(arg))
        self.default_flags = flags
        self._lo: list[int] = los
        self._hi: list[int] = his
        self._count = _size(los, his)
        self._version = 0

    @staticmethod
    def _text_of(arg) -> str:
        # flux-python passes arg.encode("utf-8") to idset_decode(), turning
        # a missing encode() or a non-bytes result into TypeError
        try:
            data = arg.encode("utf-8")
        except (TypeError, AttributeError):
            data = None
        if not isinstance(data, bytes):
            raise TypeError(
                "IDset() expected an idset string or iterable, got "
                f"{type(arg).__name__}"
            )
        return data.decode("utf-8", errors="surrogateescape")

    @classmethod
    def _of(cls, los: list[int], his: list[int]) -> IDset:
        new = cls.__new__(cls)
        new.default_flags = IDSET_FLAG_RANGE
        new._lo, new._hi, new._count = los, his, _size(los, his)
        new._version = 0
        return new

    @staticmethod
    def _coerce(arg: IDsetLike) -> IDset:
        return arg if isinstance(arg, IDset) else IDset(arg)

    def _replace(self, other: IDset) -> None:
        self._lo, self._hi, self._count = other._lo, other._hi, other._count
        self._version += 1

    # -- container protocol -------------------------------------------------

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"IDset('{self.encode(IDSET_FLAG_RANGE)}')"

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        """Iterate in ascending order over the live set, as flux-python's
        ``IDsetIterator``: the next id is always looked up one step ahead,
        so changes made by the loop body show up from the step after next.
        """
        return _walk(self, self.first(), self._version)

    def __setitem__(self, i: int, value: bool | int) -> None:
        if value in (0, 1):
            value = bool(value)
        if not isinstance(value, bool):
            raise TypeError(f"IDset item must be set to a bool or 0/1, not {value!r}")
        if value:
            self.set(i)
        else:
            self.clear(i)

    def __eq__(self, other: object) -> bool:
        # flux-python: __eq__ is equal(), which refuses anything but an IDset
        return self.equal(other)  # type: ignore[arg-type]

    # -- queries ------------------------------------------------------------

    def equal(self, idset: IDset) -> bool:
        """Return True if *idset* holds the same ids.

        Raises :class:`TypeError` if *idset* is not an :class:`IDset`: unlike
        the set operations, flux-python converts nothing here.
        """
        if not isinstance(idset, IDset):
            raise TypeError(
                f"IDset.equal() and == take an IDset, not {type(idset).__name__}"
            )
        return self._lo == idset._lo and self._hi == idset._hi

    def set_flags(self, flags: int) -> None:
        """Choose how :func:`str` renders this set from now on.

        As in flux-python the flags are stored unchecked; :meth:`encode`
        rejects invalid ones.
        """
        self.default_flags = flags

    @staticmethod
    def _check_index(i: int, name: str) -> int:
        if not isinstance(i, numbers.Integral):
            raise TypeError(f"IDset.{name} supports integers, not {type(i).__name__}")
        if i < 0:
            raise ValueError(f"negative index passed to IDset.{name}")
        return i

    def test(self, i: int) -> bool:
        """Return True if id *i* is in the set.

        A non-integer raises TypeError, a negative id ValueError and an id
        of ``2**32`` or more OverflowError, as with flux-python.
        """
        self._check_index(i, "test")
        i = c_uint(i)  # cffi passes an unsigned int: OverflowError
        j = bisect.bisect_right(self._lo, i) - 1
        return j >= 0 and self._hi[j] >= i

    def count(self) -> int:
        """Return the number of ids in the set."""
        return self._count

    def expand(self) -> list[int]:
        """Return the ids as an ascending list."""
        return [
            i
            for lo, hi in zip(self._lo, self._hi, strict=True)
            for i in range(lo, hi + 1)
        ]

    def first(self) -> int:
        """Return the smallest id, or IDSET_INVALID_ID if the set is empty."""
        return self._lo[0] if self._lo else IDSET_INVALID_ID

    def last(self) -> int:
        """Return the largest id, or IDSET_INVALID_ID if the set is empty."""
        return self._hi[-1] if self._hi else IDSET_INVALID_ID

    def _successor(self, want: int) -> tuple[int, int]:
        """Return (smallest id >= *want* or IDSET_INVALID_ID, its range index)."""
        j = bisect.bisect_right(self._lo, want) - 1
        if j >= 0 and self._hi[j] >= want:
            return want, j
        if j + 1 < len(self._lo):
            return self._lo[j + 1], j + 1
        return IDSET_INVALID_ID, -1

    def next(self, i: int) -> int:
        """Return the smallest id greater than *i*, or IDSET_INVALID_ID.

        *i* itself need not be in the set.  As libidset computes ``i + 1``
        in an unsigned int, ``next(2**32 - 1)`` wraps round to
        :meth:`first`.
        """
        self._check_index(i, "next")
        i = c_uint(i)
        return self._successor((i + 1) & _UINT_MAX)[0]

    def encode(self, flags: int | None = None) -> str:
        """Return the RFC 22 string for this set.

        *flags* defaults to the set's own (see :meth:`set_flags`).  With
        ``IDSET_FLAG_RANGE`` runs of consecutive ids become ``lo-hi``; with
        ``IDSET_FLAG_BRACKETS`` the string is bracketed, but only when it
        holds two or more ids.  The empty set encodes as ``""``.  Other
        flag bits raise :class:`RuntimeError` and a non-integer
        :class:`TypeError`, as with flux-python.
        """
        flags = _encode_flags(self.default_flags if flags is None else flags)
        parts: list[str] = []
        if flags & IDSET_FLAG_RANGE:
            for lo, hi in zip(self._lo, self._hi, strict=True):
                parts.append(str(lo) if lo == hi else f"{lo}-{hi}")
        else:
            for lo, hi in zip(self._lo, self._hi, strict=True):
                parts.extend(map(str, range(lo, hi + 1)))
        text = ",".join(parts)
        if flags & IDSET_FLAG_BRACKETS and self._count > 1:
            return f"[{text}]"
        return text

    def copy(self) -> IDset:
        """Return an independent copy (with the default encoding flags)."""
        return IDset._of(list(self._lo), list(self._hi))

    # -- mutation -----------------------------------------------------------

    def _span(self, start: int, end: int | None, name: str) -> tuple[int, int]:
        self._check_index(start, name)
        if end is None:
            a = c_uint(start)
            if not _valid_id(a):
                raise errno_error(errno.EINVAL)
            return a, a
        self._check_index(end, name)
        if end < start:
            raise ValueError(f"can't set range with {start} > {end}")
        a, b = c_uint(start), c_uint(end)
        if not (_valid_id(a) and _valid_id(b)):
            raise errno_error(errno.EINVAL)
        return a, b

    def set(self, start: int, end: int | None = None) -> IDset:
        """Add id *start*, or every id from *start* to *end* inclusive.

        Returns the set itself, so calls can be chained.  Besides the
        argument checks of :meth:`test`, an id libidset cannot hold raises
        :class:`OSError`: ``EINVAL`` for ``2**32 - 2`` or ``2**32 - 1``,
        ``ERANGE`` for any other id above ``2**31 - 1``.
        """
        a, b = self._span(start, end, "set")
        if b > _MAX_ID:
            raise errno_error(errno.ERANGE)
        los, his = self._lo, self._hi
        # ranges touching [a, b], neighbours included, melt into one
        left = bisect.bisect_left(his, a - 1)
        right = bisect.bisect_right(los, b + 1)
        removed = _size(los[left:right], his[left:right])
        if left < right:
            a = min(a, los[left])
            b = max(b, his[right - 1])
        los[left:right] = [a]
        his[left:right] = [b]
        self._count += b - a + 1 - removed
        self._version += 1
        return self

    def clear(self, start: int, end: int | None = None) -> IDset:
        """Remove id *start*, or every id from *start* to *end* inclusive.

        Ids that are not present are ignored.  Returns the set itself.  The
        argument checks are those of :meth:`set`, except that a large id
        is not an error.
        """
        a, b = self._span(start, end, "clear")
        los, his = self._lo, self._hi
        left = bisect.bisect_left(his, a)
        right = bisect.bisect_right(los, b)
        if left >= right:
            return self
        keep_lo: list[int] = []
        keep_hi: list[int] = []
        if los[left] < a:
            keep_lo.append(los[left])
            keep_hi.append(a - 1)
        if his[right - 1] > b:
            keep_lo.append(b + 1)
            keep_hi.append(his[right - 1])
        self._count += _size(keep_lo, keep_hi) - _size(los[left:right], his[left:right])
        los[left:right] = keep_lo
        his[left:right] = keep_hi
        self._version += 1
        return self

    def add(self, arg: IDsetLike) -> IDset:
        """Add every id in *arg* (anything :class:`IDset` accepts); return self."""
        self._replace(self.union(arg))
        return self

    def subtract(self, arg: IDsetLike) -> IDset:
        """Remove every id in *arg* (anything :class:`IDset` accepts); return self.

        *arg* is converted first, so a bad argument raises even when this
        set is empty.
        """
        self._replace(self.difference(arg))
        return self

    # -- set algebra (new sets) ----------------------------------------------

    def union(self, *args: IDsetLike) -> IDset:
        """Return a new set holding the ids of this set and of every arg."""
        los, his = list(self._lo), list(self._hi)
        for arg in args:
            other = self._coerce(arg)
            pairs = sorted(zip(los + other._lo, his + other._hi, strict=True))
            los, his = _coalesce(pairs)
        return IDset._of(los, his)

    def intersect(self, *args: IDsetLike) -> IDset:
        """Return a new set holding the ids common to this set and every arg."""
        los, his = list(self._lo), list(self._hi)
        for arg in args:
            other = self._coerce(arg)
            los, his = _intersect(los, his, other._lo, other._hi)
        return IDset._of(los, his)

    def difference(self, *args: IDsetLike) -> IDset:
        """Return a new set holding the ids of this set found in no arg.

        Every arg is converted, as in flux-python, even once the result is
        empty: ``IDset() - "foo"`` raises ValueError.
        """
        los, his = list(self._lo), list(self._hi)
        for arg in args:
            other = self._coerce(arg)
            if not los:
                continue
            # what is left is what also lies in the gaps of the other set
            starts = [0, *(hi + 1 for hi in other._hi)]
            ends = [*(lo - 1 for lo in other._lo), his[-1]]
            gaps = [(s, e) for s, e in zip(starts, ends, strict=True) if s <= e]
            glo = [s for s, _ in gaps]
            ghi = [e for _, e in gaps]
            los, his = _intersect(los, his, glo, ghi)
        return IDset._of(los, his)

    # operators are the methods under other names, as in flux-python
    __contains__ = __getitem__ = test
    __add__ = __or__ = union
    __sub__ = difference
    __and__ = intersect
    __iadd__ = add
    __isub__ = subtract


def _walk(idset: IDset, cur: int, version: int) -> Iterator[int]:
    """Yield the ids of *idset* from *cur* on, as flux-python's iterator does.

    The live set is walked with the next id always in hand: each step looks
    up the id after the one it is about to return, so ids added or removed
    by the loop body show up from the step after next, and an id removed
    just after it was looked up is still returned.  While the set is
    unchanged the walk steps through its ranges directly.
    """
    if cur == IDSET_INVALID_ID:
        return
    j = 0  # index of the range holding cur, while version holds
    while True:
        if version == idset._version:
            if cur < idset._hi[j]:
                nxt = cur + 1
            elif j + 1 < len(idset._lo):
                j += 1
                nxt = idset._lo[j]
            else:
                nxt = IDSET_INVALID_ID
        else:
            version = idset._version
            nxt, j = idset._successor(cur + 1)
        yield cur
        if nxt == IDSET_INVALID_ID:
            return
        cur = nxt


class IDsetIterator:
    """Iterator over an :class:`IDset`, in ascending order, as flux-python's.

    It walks the live set (see :meth:`IDset.__iter__`); the first id is
    looked up when the iterator is made.
    """

    __slots__ = ("_walk",)

    def __init__(self, idset: IDset):
        self._walk = _walk(idset, idset.first(), idset._version)

    def __iter__(self) -> IDsetIterator:
        return self

    def __next__(self) -> int:
        return next(self._walk)


def _intersect(
    alo: list[int], ahi: list[int], blo: list[int], bhi: list[int]
) -> tuple[list[int], list[int]]:
    """Overlap two canonical range lists (the result is canonical too)."""
    los: list[int] = []
    his: list[int] = []
    i = j = 0
    while i < len(alo) and j < len(blo):
        lo = max(alo[i], blo[j])
        hi = min(ahi[i], bhi[j])
        if lo <= hi:
            los.append(lo)
            his.append(hi)
        if ahi[i] < bhi[j]:
            i += 1
        else:
            j += 1
    return los, his


def decode(string: str) -> IDset:
    """Parse an RFC 22 string into a new :class:`IDset` (as ``IDset(string)``)."""
    return IDset(string)
