"""Ordered lists of host names in the RFC 29 hostlist form.

This module stands in for ``flux.hostlist`` when libflux is not available.
It offers the same public names and behaviour as the libflux-backed module
of flux-python 0.88.0, errors included, so the wheel's ``Rv1Set`` and your
own scheduler code run unchanged, and fail where they would fail on a real
broker.

A :class:`Hostlist` is an ordered *list*, not a set: order is kept and a
name may appear more than once.  In string form, hosts that share a prefix
and carry consecutive numeric suffixes collapse into brackets::

    >>> hl = Hostlist("node[0-3,7],login1")
    >>> len(hl), hl[-1], "node2" in hl
    (6, 'login1', True)
    >>> str(Hostlist(["n08", "n09", "n10", "n1"]))
    'n[08-10,1]'

Decoding follows libflux's ``hostlist_decode()``, leniency included:
hosts are split at commas, blanks and tabs outside brackets; only the
first bracket list of a host expression is expanded (``"a[1-2]b[3]"``
gives the plain names ``a1b[3]`` and ``a2b[3]``); a number in brackets is
read like ``strtoul()``, so ``"n[ 1]"`` and ``"n[+1]"`` give ``n01`` (the
padding is the width of the text) and ``"n[1-]"`` gives ``n1``; a bracket
may hold at most 10240 comma elements and a range at most 2**20 hosts; a
plain host is cut to 1023 bytes, and one whose numeric suffix overflows 64
bits is silently left out; and the string ends at its first NUL.

Encoding follows libflux's ``hostlist_encode()``: zero padded numbers only
share a range with numbers of the same printed width, and hosts decoded from
an expression with a suffix after the brackets (``"foo[1-2]-ib"``) are kept
as plain names (``"foo1-ib,foo2-ib"``), never re-bracketed.

Like flux-python, :meth:`Hostlist.find` (and so ``in``) raises
:class:`OSError` ``EINVAL`` for ``None`` or a name holding a comma, blank,
tab or bracket, and :class:`~._binding.InvalidArguments` (a ValueError) for
a name that is not a string; :meth:`Hostlist.delete` takes ``str()`` of its
argument and raises :class:`OSError` when that does not decode.
"""

from __future__ import annotations

import errno
import numbers
import re
from collections import Counter
from collections.abc import Iterable
from typing import Union, overload

from mock_broker.flux_substitute._binding import c_string_arg, errno_error

__all__ = ["Hostlist", "HostlistIterator", "decode"]

_DIGITS = "0123456789"

# libhostlist splits hostlist strings at commas, spaces and tabs outside
# brackets; brackets are counted to keep "n[1,2]" in one piece.
_SPECIAL_RE = re.compile(r"[\[\], \t]")
_SEPARATORS_RE = re.compile(r"[, \t]+")
# what strtoul() reads: C-locale blanks, a sign, decimal digits
_STRTOUL_RE = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]*)")
# hostname_create() refuses names holding any of these
_INVALID_NAME_RE = re.compile(r"[,\[\]\t ]")

_ULONG_MAX = 2**64 - 1
# libhostlist refuses a single bracket range of more hosts than this ...
_MAX_RANGE = 1 << 20
# ... and a bracket list of more comma elements than this
_MAX_RANGES = 10240
# a plain host is copied into a 1024-byte buffer before it is parsed
_MAX_TOKEN_BYTES = 1023
# hostlist_nth() prints a host into a buffer of _POSIX_HOST_NAME_MAX + 16
_NTH_BUFSIZE = 255 + 16

HostlistLike = Union["Hostlist", str, Iterable[str]]


class _DecodeError(ValueError):
    """``hostlist_decode()`` failed; *errnum* is the errno it left."""

    def __init__(self, why: str, errnum: int = errno.EINVAL):
        super().__init__(why)
        self.errnum = errnum


def _strtoul(text: str) -> tuple[int, int]:
    """Read *text* like C ``strtoul(text, &end, 10)``: (value, end index).

    End index 0 means no number was found.  Out of range values saturate at
    ULONG_MAX and a minus sign negates modulo 2**64, as in C.
    """
    m = _STRTOUL_RE.match(text)
    sign, digits = m.groups()
    if not digits:
        return 0, 0
    value = int(digits)
    if value > _ULONG_MAX:
        value = _ULONG_MAX
    elif sign == "-":
        value = -value % (_ULONG_MAX + 1)
    return value, m.end()


def _parse_range(element: str) -> tuple[int, int, int]:
    """Parse one bracket element like libhostlist: (lo, hi, print width)."""
    lo_text, dash, hi_text = element.partition("-")
    if hi_text.startswith("-"):
        raise _DecodeError(f"negative number in {element!r}")
    lo, end = _strtoul(lo_text)
    if end == 0:
        raise _DecodeError(f"no number in {element!r}")
    if hi_text:
        hi, hi_end = _strtoul(hi_text)
        if hi_end == 0 or hi_end != len(hi_text):
            raise _DecodeError(f"bad range end in {element!r}")
    else:
        # "1-" reads as "1"; only here must the low number fill its text
        hi = lo
        if end != len(lo_text):
            raise _DecodeError(f"bad number in {element!r}")
    if lo > hi:
        raise _DecodeError(f"range {element!r} descends")
    count = (hi - lo + 1) & _ULONG_MAX  # unsigned long arithmetic
    if count > _MAX_RANGE:
        raise _DecodeError(
            f"range {element!r} holds more than {_MAX_RANGE} hosts", errno.ERANGE
        )
    if count == 0:
        # 0-ULONG_MAX: libhostlist keeps a range whose count wraps to 0,
        # which a list of names cannot represent
        raise _DecodeError(f"range {element!r} is too large to expand")
    return lo, hi, len(lo_text.encode("utf-8", errors="surrogateescape"))


def _tokens(text: str) -> list[str]:
    """Split at separators outside brackets, as libhostlist's next_tok()."""
    if "[" not in text and "]" not in text:
        return [t for t in _SEPARATORS_RE.split(text) if t]
    tokens: list[str] = []
    depth = 0  # may go negative: a stray "]" keeps the next separator
    start = 0
    for m in _SPECIAL_RE.finditer(text):
        c = m.group()
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif depth == 0:
            if m.start() > start:
                tokens.append(text[start : m.start()])
            start = m.end()
    if start < len(text):
        tokens.append(text[start:])
    return tokens


def _plain_host(token: str, names: list[str], splits: list[int]) -> None:
    """Append a host given without brackets (libhostlist's append_host)."""
    if len(token) > _MAX_TOKEN_BYTES // 4:
        data = token.encode("utf-8", errors="surrogateescape")
        if len(data) > _MAX_TOKEN_BYTES:
            token = data[:_MAX_TOKEN_BYTES].decode("utf-8", errors="surrogateescape")
    stem = token.rstrip(_DIGITS)
    if len(token) - len(stem) >= 20 and int(token[len(stem) :]) > _ULONG_MAX:
        return  # hostname_create() fails (ERANGE) and the host is dropped
    names.append(token)
    splits.append(len(stem))


def _decode_text(text: str) -> tuple[list[str], list[int]]:
    """Expand a hostlist string (already cut at NUL) into names and splits.

    For every host the split is the length of the part before its numeric
    suffix, or the whole name's length when the host is to be printed
    verbatim (no numeric suffix, or a suffix after brackets).  Raises
    :class:`_DecodeError` where ``hostlist_decode()`` returns NULL.
    """
    names: list[str] = []
    splits: list[int] = []
    for token in _tokens(text):
        if "[" not in token:
            if "]" in token:
                raise _DecodeError(f"unmatched ']' in {token!r}")
            _plain_host(token, names, splits)
            continue
        prefix, _, rest = token.partition("[")
        if "]" not in rest:
            raise _DecodeError(f"unmatched '[' in {token!r}")
        idlist, _, suffix = rest.partition("]")
        elements = idlist.split(",")
        if len(elements) > _MAX_RANGES:
            for element in elements[:_MAX_RANGES]:
                _parse_range(element)
            raise _DecodeError(f"more than {_MAX_RANGES} ranges in {token!r}")
        for element in elements:
            lo, hi, width = _parse_range(element)
            new = [f"{prefix}{n:0{width}d}{suffix}" for n in range(lo, hi + 1)]
            names.extend(new)
            if suffix:
                splits.extend(len(name) for name in new)
            else:
                splits.extend([len(prefix)] * len(new))
    return names, splits


def _decode(arg: str) -> tuple[list[str], list[int]]:
    """Decode a string as ``Hostlist(arg)`` does; ValueError on failure."""
    if not arg.isascii():
        # flux-python encodes strictly: UnicodeEncodeError, a ValueError
        arg.encode("utf-8")
    text = arg.partition("\0")[0] if "\0" in arg else arg  # C stops at NUL
    try:
        return _decode_text(text)
    except _DecodeError as exc:
        # flux-python: ValueError(f"Invalid hostlist: '{arg}'")
        raise ValueError(f"Invalid hostlist: '{arg}' ({exc})") from None


def _run_text(lo: int, hi: int, width: int) -> str:
    first = f"{lo:0{width}d}"
    return first if lo == hi else f"{first}-{hi:0{width}d}"


def _encode(names: list[str], splits: list[int]) -> str:
    """Compress hosts into the shortest libhostlist-style string."""
    # runs: [prefix, lo, hi, min_width, max_width], or [name, None] verbatim
    runs: list[list] = []
    cur: list | None = None
    for name, k in zip(names, splits, strict=True):
        if k == len(name):
            runs.append([name, None])
            cur = None
            continue
        prefix, digits = name[:k], name[k:]
        num = int(digits)
        # "007" prints as 007 only at width 3; "42" prints right at any
        # width up to 2.  A run needs one width that prints all its members.
        if len(digits) > 1 and digits[0] == "0":
            wmin = wmax = len(digits)
        else:
            wmin, wmax = 0, len(digits)
        if (
            cur is not None
            and cur[0] == prefix
            and num == cur[2] + 1
            and max(cur[3], wmin) <= min(cur[4], wmax)
        ):
            cur[2] = num
            cur[3] = max(cur[3], wmin)
            cur[4] = min(cur[4], wmax)
        else:
            cur = [prefix, num, num, wmin, wmax]
            runs.append(cur)
    out: list[str] = []
    i = 0
    while i < len(runs):
        run = runs[i]
        if run[1] is None:
            out.append(run[0])
            i += 1
            continue
        j = i + 1
        while j < len(runs) and runs[j][1] is not None and runs[j][0] == run[0]:
            j += 1
        body = ",".join(_run_text(r[1], r[2], r[3]) for r in runs[i:j])
        if j - i == 1 and run[1] == run[2]:
            out.append(run[0] + body)
        else:
            out.append(f"{run[0]}[{body}]")
        i = j
    return ",".join(out)


class Hostlist:
    """An ordered list of host names, read and written as RFC 29 strings.

    ``Hostlist(arg)`` accepts a hostlist string (``"node[0-3,7]"``,
    ``"n[001-010]"``, ``"a1,b[1-2]"``, ``"foo[1-3]-ib"``, ``""``) or an
    iterable of such strings, another :class:`Hostlist` included (each of
    its names is decoded again, as flux-python does).  A string that does
    not decode raises :class:`ValueError` naming it; an argument of the
    wrong type, or an iterable holding a non-string, raises
    :class:`TypeError`.
    """

    __slots__ = ("_names", "_splits", "__dict__")

    def __init__(self, arg: HostlistLike = "") -> None:
        if isinstance(arg, str):
            self._names, self._splits = _decode(arg)
        elif isinstance(arg, Iterable):
            self._names, self._splits = [], []
            for hosts in arg:
                if not isinstance(hosts, str):
                    raise TypeError(
                        f"Hostlist(): expected string or Iterable, got "
                        f"{type(hosts).__name__}"
                    )
                names, splits = _decode(hosts)
                self._names += names
                self._splits += splits
        else:
            raise TypeError(
                f"Hostlist(): expected string or Iterable, got {type(arg).__name__}"
            )

    @classmethod
    def _of(cls, names: list[str], splits: list[int]) -> Hostlist:
        new = cls.__new__(cls)
        new._names, new._splits = names, splits
        return new

    def __str__(self) -> str:
        return self.encode()

    def __repr__(self) -> str:
        return f"Hostlist('{self.encode()}')"

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> HostlistIterator:
        return HostlistIterator(self)

    def __contains__(self, name: object) -> bool:
        """Test membership with :meth:`find`: only "not found" is False."""
        try:
            self.find(name)  # type: ignore[arg-type]
        except FileNotFoundError:
            return False
        return True

    def _nth(self, i: int) -> str:
        """Return host *i* as ``hostlist_nth()`` prints it."""
        name = self._names[i]
        if len(name) * 4 < _NTH_BUFSIZE:
            return name
        # libhostlist prints into a fixed buffer: a prefix that does not fit
        # makes it return NULL, which flux-python then calls .decode() on;
        # a number that does not fit is cut short
        data = name.encode("utf-8", errors="surrogateescape")
        k = self._splits[i]
        prefix = name[:k].encode("utf-8", errors="surrogateescape")
        prefix_len = len(prefix)
        if prefix_len >= _NTH_BUFSIZE:
            raise AttributeError(
                "'NoneType' object has no attribute 'decode' (hostlist_nth() "
                f"cannot print a host name of {len(data)} bytes)"
            )
        return data[: _NTH_BUFSIZE - 1].decode("utf-8")

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice | Iterable[int]) -> Hostlist: ...

    def __getitem__(self, index):
        """Index like a Python list: ``hl[0]``, ``hl[-1]`` give names;
        ``hl[1:3]`` and ``hl[[0, 2]]`` give new Hostlists.

        As in flux-python, a new Hostlist is built by appending each picked
        name, so every name is decoded again.
        """
        if isinstance(index, numbers.Integral):
            n = len(self._names)
            i = n + index if index < 0 else index
            if 0 <= i < n:
                return self._nth(int(i))
            raise IndexError("Hostlist index out of range")
        if isinstance(index, slice):
            picked = Hostlist()
            for n in range(len(self))[index]:
                picked.append(self[n])
            return picked
        if isinstance(index, Iterable):
            picked = Hostlist()
            for n in index:
                if not isinstance(n, numbers.Integral):
                    raise TypeError(f"Invalid Hostlist index '{n}'")
                picked.append(self[n])
            return picked
        raise TypeError("Hostlist index must be integer or slice")

    def encode(self) -> str:
        """Return the compressed RFC 29 string, e.g. ``"node[0-3,7]"``."""
        return _encode(self._names, self._splits)

    def count(self) -> int:
        """Return the number of hosts, duplicates included."""
        return len(self._names)

    def expand(self) -> list[str]:
        """Return the hosts as a list of names, in order."""
        return list(self)

    def copy(self) -> Hostlist:
        """Return an independent copy."""
        return Hostlist._of(list(self._names), list(self._splits))

    def append(self, *args: HostlistLike) -> int:
        """Add hosts to the end; each arg is a Hostlist (copied as is) or
        anything :class:`Hostlist` accepts.  Returns how many hosts were
        added."""
        added = 0
        for arg in args:
            other = arg if isinstance(arg, Hostlist) else Hostlist(arg)
            self._names += other._names
            self._splits += other._splits
            added += len(other._names)
        return added

    def delete(self, hosts: HostlistLike) -> int:
        """Remove the first occurrence of each host in ``str(hosts)``.

        As in flux-python, *hosts* is converted with :func:`str` and that
        string decoded: a Hostlist or a hostlist string works, while a list
        (whose ``str()`` is not a hostlist) raises :class:`OSError`
        ``EINVAL``, as does any string that does not decode.  A host named
        twice removes two occurrences; absent hosts are ignored.  Returns
        the number of hosts removed, less one for each named host libflux
        cannot look up (one holding a bracket).
        """
        data = c_string_arg(str(hosts), "hostlist_delete")
        text = data.decode("utf-8", errors="surrogateescape")
        try:
            doomed_names, _ = _decode_text(text)
        except _DecodeError as exc:
            raise errno_error(exc.errnum) from None
        result = 0
        doomed: Counter[str] = Counter()
        for name in doomed_names:
            if _INVALID_NAME_RE.search(name):
                result -= 1
            else:
                doomed[name] += 1
        if not doomed:
            return result
        names: list[str] = []
        splits: list[int] = []
        # deleting the first occurrence k times equals dropping the first k
        for name, k in zip(self._names, self._splits, strict=True):
            if doomed.get(name):
                doomed[name] -= 1
                result += 1
            else:
                names.append(name)
                splits.append(k)
        self._names, self._splits = names, splits
        return result

    def _sort_key(self, i: int) -> tuple:
        name, k = self._names[i], self._splits[i]
        if k == len(name):
            return (name, 0, 0, 0)
        # numbers sort by printed width first, so padded ids ("015") stay
        # apart from unpadded ones, as libhostlist orders them
        return (name[:k], 1, len(name) - k, int(name[k:]))

    def sort(self) -> Hostlist:
        """Sort in place by prefix, then numerically; return self."""
        order = sorted(range(len(self._names)), key=self._sort_key)
        self._names = [self._names[i] for i in order]
        self._splits = [self._splits[i] for i in order]
        return self

    def uniq(self) -> Hostlist:
        """Sort in place and drop repeated names; return self."""
        self.sort()
        seen: set[str] = set()
        names: list[str] = []
        splits: list[int] = []
        for name, k in zip(self._names, self._splits, strict=True):
            if name not in seen:
                seen.add(name)
                names.append(name)
                splits.append(k)
        self._names, self._splits = names, splits
        return self

    def find(self, host: str) -> int:
        """Return the position of the first *host*.

        Raises :class:`FileNotFoundError` (errno ``ENOENT``) if it is absent,
        :class:`OSError` ``EINVAL`` for ``None`` or a name holding a comma,
        blank, tab or bracket, and :class:`~._binding.InvalidArguments` (a
        ValueError) for anything but a string or bytes, as flux-python's
        ``hostlist_find()`` wrapper does.
        """
        data = c_string_arg(host, "hostlist_find")
        if data is None:
            raise errno_error(errno.EINVAL)
        name = data.decode("utf-8", errors="surrogateescape")
        if _INVALID_NAME_RE.search(name):
            raise errno_error(errno.EINVAL)
        try:
            return self._names.index(name)
        except ValueError:
            raise errno_error(errno.ENOENT) from None

    def index(self, hosts: HostlistLike, ignore_nomatch: bool = False) -> list[int]:
        """Return the position of each host of *hosts*, in *hosts*' order.

        Missing hosts raise :class:`FileNotFoundError` listing them, unless
        *ignore_nomatch* is true, in which case they are left out.
        """
        if not isinstance(hosts, Hostlist):
            hosts = Hostlist(hosts)
        first: dict[str, int] = {}
        for pos, name in enumerate(self._names):
            first.setdefault(name, pos)
        found: list[int] = []
        missing = Hostlist()
        for name in hosts:
            if _INVALID_NAME_RE.search(name):
                raise errno_error(errno.EINVAL)  # what find() raises
            if name in first:
                found.append(first[name])
            else:
                missing.append(name)
        if missing and not ignore_nomatch:
            plural = "s" if len(missing) > 1 else ""
            # flux-python raises it with a message only (no errno)
            raise FileNotFoundError(f"host{plural} '{missing}' not found")
        return found


class HostlistIterator:
    """Iterator over a :class:`Hostlist` by position, as flux-python's.

    It reads the live list: hosts appended or deleted during the loop move
    what the following steps return.
    """

    __slots__ = ("_hostlist", "_index")

    def __init__(self, hostlist: Hostlist):
        self._hostlist = hostlist
        self._index = 0

    def __iter__(self) -> HostlistIterator:
        return self

    def __next__(self) -> str:
        hl = self._hostlist
        if self._index < len(hl._names):
            name = hl._nth(self._index)
            self._index += 1
            return name
        raise StopIteration


def decode(arg: HostlistLike) -> Hostlist:
    """Parse an RFC 29 string (or iterable of them) into a new Hostlist."""
    return Hostlist(arg)
