"""Sets of non-negative integer ids in the RFC 22 string form.

This module stands in for ``flux.idset`` when libflux is not available.  It
offers the same public names and behaviour as the libflux-backed module of
flux-python 0.88.0, so code written against it (the wheel's ``Rv1Set``,
``Rv1Pool`` and friends, or a scheduler of your own) runs unchanged.

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
libflux, empty elements (``"1,,2"``, a trailing comma) are skipped.
"""

from __future__ import annotations

import bisect
import functools
import numbers
import operator
import re
from collections.abc import Iterable, Iterator
from typing import Union

__all__ = [
    "IDSET_FLAG_BRACKETS",
    "IDSET_FLAG_RANGE",
    "IDSET_INVALID_ID",
    "IDset",
    "decode",
]

#: Returned by :meth:`IDset.first`, :meth:`IDset.next` and
#: :meth:`IDset.last` when there is no such id (libidset: ``UINT_MAX - 1``).
IDSET_INVALID_ID = 2**32 - 2

#: Encoding flag: wrap the string in ``[...]`` when it holds two or more ids.
IDSET_FLAG_BRACKETS = 2

#: Encoding flag: compress consecutive ids into ``lo-hi`` ranges.
IDSET_FLAG_RANGE = 4

# libidset refuses to grow a set's universe past INT_MAX + 1 slots, so the
# largest id real flux can hold is INT_MAX; staying inside that keeps sets
# built here portable.
_MAX_ID = 2**31 - 1
_VALID_FLAGS = IDSET_FLAG_BRACKETS | IDSET_FLAG_RANGE

# One comma-separated element: an id or a range.  ASCII digits only, and no
# leading zero except for "0" itself (RFC 22).  A whole body is a comma list
# of such elements, where empty ones are skipped as libidset's strtok does.
_ELEMENT = r"(?:0|[1-9][0-9]*)(?:-(?:0|[1-9][0-9]*))?"
_ELEMENT_RE = re.compile(_ELEMENT)
_BODY_RE = re.compile(rf"(?:{_ELEMENT})?(?:,(?:{_ELEMENT})?)*")

IDsetLike = Union["IDset", str, int, Iterable[int]]


def _check_flags(flags: int) -> int:
    if flags.__class__ is int and not flags & ~_VALID_FLAGS:
        return flags
    if not isinstance(flags, numbers.Integral) or flags & ~_VALID_FLAGS:
        raise ValueError(
            f"IDset flags must combine IDSET_FLAG_RANGE and IDSET_FLAG_BRACKETS, "
            f"got {flags!r}"
        )
    return int(flags)


def _parse(text: str) -> tuple[list[int], list[int]]:
    """Turn an RFC 22 string into sorted, disjoint, non-adjacent ranges."""
    los, his = _parse_cached(text)
    return list(los), list(his)


@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    # Schedulers parse the same few strings ("0-3", "0") over and over.
    los, his = _parse_uncached(text)
    return tuple(los), tuple(his)


def _parse_uncached(text: str) -> tuple[list[int], list[int]]:
    body = text
    if len(body) >= 2 and body[0] == "[" and body[-1] == "]":
        body = body[1:-1]
    if "[" in body or "]" in body:
        raise ValueError(f"invalid idset {text!r}: mismatched or nested brackets")
    # Validating the whole body with one regex keeps long rank lists fast;
    # only on failure is the culprit element hunted down for the message.
    if _BODY_RE.fullmatch(body) is None:
        bad = next(t for t in body.split(",") if t and not _ELEMENT_RE.fullmatch(t))
        raise ValueError(f"invalid idset {text!r}: cannot parse {bad!r}")
    los: list[int] = []
    his: list[int] = []
    prev = -1
    for token in body.split(","):
        if not token:
            continue
        lo_text, dash, hi_text = token.partition("-")
        lo = int(lo_text)
        hi = int(hi_text) if dash else lo
        if dash and hi <= lo:
            raise ValueError(f"invalid idset {text!r}: range {token!r} does not ascend")
        if lo <= prev:
            raise ValueError(
                f"invalid idset {text!r}: {token!r} repeats or is out of order"
            )
        if lo == prev + 1 and his:
            his[-1] = hi
        else:
            los.append(lo)
            his.append(hi)
        prev = hi
    if prev > _MAX_ID:
        raise ValueError(
            f"invalid idset {text!r}: {prev} exceeds the largest id {_MAX_ID}"
        )
    return los, his


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


class IDset:
    """A mutable set of non-negative integer ids (RFC 22).

    ``IDset(arg)`` accepts an RFC 22 string (``"1,3-5"``, ``"[0-3]"``,
    ``""``), a single non-negative int, an iterable of distinct
    non-negative ints, an iterable of RFC 22 strings (sorted, joined with
    commas and decoded, as flux-python does), or another :class:`IDset`.
    A malformed string, a repeated id or a negative id raises
    :class:`ValueError`; an argument of the wrong type raises
    :class:`TypeError`.

    *flags* sets how :func:`str` renders the set (see :meth:`encode`); the
    default gives ranges without brackets, e.g. ``"0-3,7"``.  Results of
    :meth:`copy` and of the set operations always start with the default
    flags, as with flux-python.
    """

    __slots__ = ("_lo", "_hi", "_count", "default_flags")
    __hash__ = None  # type: ignore[assignment]  # mutable, like a set

    def __init__(self, arg: IDsetLike = "", flags: int = IDSET_FLAG_RANGE) -> None:
        self.default_flags = _check_flags(flags)
        if isinstance(arg, IDset):
            los, his = list(arg._lo), list(arg._hi)
        elif isinstance(arg, str):
            los, his = _parse(arg)
        elif isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
            los, his = self._from_iterable([arg])
        elif isinstance(arg, Iterable):
            los, his = self._from_iterable(arg)
        else:
            raise TypeError(
                f"IDset() expected an idset string or iterable of ints, "
                f"got {type(arg).__name__}"
            )
        self._lo: list[int] = los
        self._hi: list[int] = his
        self._count = _size(los, his)

    @staticmethod
    def _from_iterable(items: Iterable) -> tuple[list[int], list[int]]:
        ids = list(items)
        if ids and all(isinstance(item, str) for item in ids):
            # flux-python decodes ",".join(sorted(items)), so an iterable of
            # RFC 22 strings works: Rv1Set matches an RFC 31 "ranks"
            # constraint, an array of idset strings, with IDset(array).
            return _parse(",".join(sorted(ids)))
        # plain ints are the norm; only vet element by element otherwise
        if set(map(type, ids)) - {int}:
            for n, item in enumerate(ids):
                if isinstance(item, bool) or not isinstance(item, numbers.Integral):
                    raise TypeError(f"IDset() ids must be integers, got {item!r}")
                ids[n] = operator.index(item)
        ids.sort()
        if ids and (ids[0] < 0 or ids[-1] > _MAX_ID):
            bad = ids[0] if ids[0] < 0 else ids[-1]
            raise ValueError(f"invalid id {bad} for IDset()")
        if len(set(ids)) != len(ids):
            # flux-python hands the ids to idset_decode(), which rejects repeats
            dup = next(a for a, b in zip(ids, ids[1:], strict=False) if a == b)
            raise ValueError(f"IDset(): id {dup} appears more than once")
        return _coalesce((i, i) for i in ids)

    @classmethod
    def _of(cls, los: list[int], his: list[int]) -> IDset:
        new = cls.__new__(cls)
        new.default_flags = IDSET_FLAG_RANGE
        new._lo, new._hi, new._count = los, his, _size(los, his)
        return new

    @staticmethod
    def _coerce(arg: IDsetLike) -> IDset:
        return arg if isinstance(arg, IDset) else IDset(arg)

    # -- container protocol -------------------------------------------------

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"IDset('{self.encode(IDSET_FLAG_RANGE)}')"

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        # Walk a snapshot so that set()/clear() inside a loop cannot corrupt it.
        for lo, hi in list(zip(self._lo, self._hi, strict=True)):
            yield from range(lo, hi + 1)

    def __setitem__(self, i: int, value: bool | int) -> None:
        if isinstance(value, bool) or value in (0, 1):
            value = bool(value)
        else:
            raise TypeError(f"IDset item must be set to a bool or 0/1, not {value!r}")
        if value:
            self.set(i)
        else:
            self.clear(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IDset):
            try:
                other = IDset(other)  # type: ignore[arg-type]
            except TypeError:
                return NotImplemented
            except ValueError:
                return False
        return self._lo == other._lo and self._hi == other._hi

    # -- queries ------------------------------------------------------------

    def equal(self, idset: IDsetLike) -> bool:
        """Return True if *idset* (or what it converts to) has the same ids."""
        other = self._coerce(idset)
        return self._lo == other._lo and self._hi == other._hi

    def set_flags(self, flags: int) -> None:
        """Choose how :func:`str` renders this set from now on."""
        self.default_flags = _check_flags(flags)

    @staticmethod
    def _check_index(i: int, name: str) -> int:
        if not isinstance(i, numbers.Integral):
            raise TypeError(f"IDset.{name} takes integer ids, not {type(i).__name__}")
        if i < 0:
            raise ValueError(f"IDset.{name} got negative id {i}")
        return int(i)

    def test(self, i: int) -> bool:
        """Return True if id *i* is in the set."""
        i = self._check_index(i, "test")
        j = bisect.bisect_right(self._lo, i) - 1
        return j >= 0 and self._hi[j] >= i

    def count(self) -> int:
        """Return the number of ids in the set."""
        return self._count

    def expand(self) -> list[int]:
        """Return the ids as an ascending list."""
        return list(self)

    def first(self) -> int:
        """Return the smallest id, or IDSET_INVALID_ID if the set is empty."""
        return self._lo[0] if self._lo else IDSET_INVALID_ID

    def last(self) -> int:
        """Return the largest id, or IDSET_INVALID_ID if the set is empty."""
        return self._hi[-1] if self._hi else IDSET_INVALID_ID

    def next(self, i: int) -> int:
        """Return the smallest id greater than *i*, or IDSET_INVALID_ID.

        *i* itself need not be in the set.
        """
        want = self._check_index(i, "next") + 1
        j = bisect.bisect_right(self._lo, want) - 1
        if j >= 0 and self._hi[j] >= want:
            return want
        return self._lo[j + 1] if j + 1 < len(self._lo) else IDSET_INVALID_ID

    def encode(self, flags: int | None = None) -> str:
        """Return the RFC 22 string for this set.

        *flags* defaults to the set's own (see :meth:`set_flags`).  With
        ``IDSET_FLAG_RANGE`` runs of consecutive ids become ``lo-hi``; with
        ``IDSET_FLAG_BRACKETS`` the string is bracketed, but only when it
        holds two or more ids.  The empty set encodes as ``""``.
        """
        flags = self.default_flags if flags is None else _check_flags(flags)
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
        start = self._check_index(start, name)
        if end is None:
            return start, start
        end = self._check_index(end, name)
        if end < start:
            raise ValueError(f"IDset.{name}: range end {end} is below start {start}")
        return start, end

    def set(self, start: int, end: int | None = None) -> IDset:
        """Add id *start*, or every id from *start* to *end* inclusive.

        Returns the set itself, so calls can be chained.
        """
        a, b = self._span(start, end, "set")
        if b > _MAX_ID:
            raise ValueError(f"IDset.set: id {b} exceeds the largest id {_MAX_ID}")
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
        return self

    def clear(self, start: int, end: int | None = None) -> IDset:
        """Remove id *start*, or every id from *start* to *end* inclusive.

        Ids that are not present are ignored.  Returns the set itself.
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
        return self

    def add(self, arg: IDsetLike) -> IDset:
        """Add every id in *arg* (anything :class:`IDset` accepts); return self."""
        merged = self.union(arg)
        self._lo, self._hi, self._count = merged._lo, merged._hi, merged._count
        return self

    def subtract(self, arg: IDsetLike) -> IDset:
        """Remove every id in *arg* (anything :class:`IDset` accepts); return self."""
        rest = self.difference(arg)
        self._lo, self._hi, self._count = rest._lo, rest._hi, rest._count
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
        """Return a new set holding the ids of this set found in no arg."""
        los, his = list(self._lo), list(self._hi)
        for arg in args:
            if not los:
                break
            other = self._coerce(arg)
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
    """Parse an RFC 22 string into a new :class:`IDset`."""
    return IDset(string)
