"""Ordered lists of host names in the RFC 29 hostlist form.

This module stands in for ``flux.hostlist`` when libflux is not available.
It offers the same public names and behaviour as the libflux-backed module
of flux-python 0.88.0, so the wheel's ``Rv1Set`` and your own scheduler code
run unchanged.

A :class:`Hostlist` is an ordered *list*, not a set: order is kept and a
name may appear more than once.  In string form, hosts that share a prefix
and carry consecutive numeric suffixes collapse into brackets::

    >>> hl = Hostlist("node[0-3,7],login1")
    >>> len(hl), hl[-1], "node2" in hl
    (6, 'login1', True)
    >>> str(Hostlist(["n08", "n09", "n10", "n1"]))
    'n[08-10,1]'

Encoding follows libflux's ``hostlist_encode()``: zero padded numbers only
share a range with numbers of the same printed width, and hosts decoded from
an expression with a suffix after the brackets (``"foo[1-2]-ib"``) are kept
as plain names (``"foo1-ib,foo2-ib"``), never re-bracketed.
"""

from __future__ import annotations

import errno
import numbers
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Union, overload

__all__ = ["Hostlist", "decode"]

_DIGITS = "0123456789"

# libhostlist splits hostlist strings at commas, spaces and tabs (outside
# brackets); brackets are tracked to keep "n[1,2]" in one piece.
_SPECIAL_RE = re.compile(r"[\[\], \t]")
_SEPARATORS_RE = re.compile(r"[, \t]+")
_RANGE_RE = re.compile(r"([0-9]+)(?:-([0-9]+))?")

# libhostlist refuses a single bracket range of more hosts than this.
_MAX_RANGE = 1 << 20

HostlistLike = Union["Hostlist", str, Iterable[str]]


def _tokens(text: str) -> list[str]:
    """Split at top-level separators, checking that brackets balance."""
    if "[" not in text and "]" not in text:
        return [t for t in _SEPARATORS_RE.split(text) if t]
    tokens: list[str] = []
    depth = 0
    start = 0
    for m in _SPECIAL_RE.finditer(text):
        c = m.group()
        if c == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"invalid hostlist {text!r}: nested '['")
        elif c == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"invalid hostlist {text!r}: unmatched ']'")
        elif depth == 0:
            if m.start() > start:
                tokens.append(text[start : m.start()])
            start = m.end()
    if depth:
        raise ValueError(f"invalid hostlist {text!r}: unmatched '['")
    if start < len(text):
        tokens.append(text[start:])
    return tokens


def _parse(text: str) -> tuple[list[str], list[int]]:
    """Expand an RFC 29 string into host names and their prefix lengths.

    For every host the returned split is the length of the part before its
    numeric suffix, or the whole name's length when the host is to be
    printed verbatim (no numeric suffix, or a suffix after brackets).
    """
    names: list[str] = []
    splits: list[int] = []
    for token in _tokens(text):
        if "[" not in token:
            names.append(token)
            splits.append(len(token.rstrip(_DIGITS)))
            continue
        prefix, _, rest = token.partition("[")
        idlist, _, suffix = rest.partition("]")
        if "[" in suffix or "]" in suffix:
            raise ValueError(
                f"invalid hostlist {text!r}: only one bracket list per host "
                f"expression is supported, got {token!r}"
            )
        for element in idlist.split(","):
            m = _RANGE_RE.fullmatch(element)
            if m is None:
                raise ValueError(
                    f"invalid hostlist {text!r}: bad range {element!r} in {token!r}"
                )
            lo_text, hi_text = m.group(1), m.group(2)
            lo = int(lo_text)
            hi = lo if hi_text is None else int(hi_text)
            if hi < lo:
                raise ValueError(
                    f"invalid hostlist {text!r}: range {element!r} descends"
                )
            if hi - lo + 1 > _MAX_RANGE:
                raise ValueError(
                    f"invalid hostlist {text!r}: range {element!r} holds more "
                    f"than {_MAX_RANGE} hosts"
                )
            # the first number's printed width pads every id of its range
            width = len(lo_text)
            new = [f"{prefix}{n:0{width}d}{suffix}" for n in range(lo, hi + 1)]
            names.extend(new)
            if suffix:
                splits.extend(len(name) for name in new)
            else:
                splits.extend([len(prefix)] * len(new))
    return names, splits


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
    ``"n[001-010]"``, ``"a1,b[1-2]"``, ``"foo[1-3]-ib"``, ``""``), an
    iterable of such strings, or another :class:`Hostlist` (copied).  A
    malformed string raises :class:`ValueError` naming it; an argument of
    the wrong type raises :class:`TypeError`.
    """

    __slots__ = ("_names", "_splits")

    def __init__(self, arg: HostlistLike = "") -> None:
        if isinstance(arg, Hostlist):
            self._names, self._splits = list(arg._names), list(arg._splits)
        elif isinstance(arg, str):
            self._names, self._splits = _parse(arg)
        elif isinstance(arg, Iterable):
            self._names, self._splits = [], []
            for hosts in arg:
                if not isinstance(hosts, str):
                    raise TypeError(
                        f"Hostlist() expected strings, got {type(hosts).__name__}"
                    )
                names, splits = _parse(hosts)
                self._names += names
                self._splits += splits
        else:
            raise TypeError(
                f"Hostlist() expected a string or iterable of strings, "
                f"got {type(arg).__name__}"
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

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            raise TypeError(f"Hostlist holds strings, not {type(name).__name__}")
        return name in self._names

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice | Iterable[int]) -> Hostlist: ...

    def __getitem__(self, index):
        """Index like a Python list: ``hl[0]``, ``hl[-1]`` give names;
        ``hl[1:3]`` and ``hl[[0, 2]]`` give new Hostlists."""
        if isinstance(index, numbers.Integral):
            n = len(self._names)
            i = int(index) + n if index < 0 else int(index)
            if not 0 <= i < n:
                raise IndexError("Hostlist index out of range")
            return self._names[i]
        if isinstance(index, slice):
            return Hostlist._of(self._names[index], self._splits[index])
        if isinstance(index, Iterable) and not isinstance(index, str):
            picked = Hostlist()
            for n in index:
                if not isinstance(n, numbers.Integral):
                    raise TypeError(f"Invalid Hostlist index {n!r}")
                i = int(n) + len(self) if n < 0 else int(n)
                if not 0 <= i < len(self):
                    raise IndexError("Hostlist index out of range")
                picked._names.append(self._names[i])
                picked._splits.append(self._splits[i])
            return picked
        raise TypeError("Hostlist index must be an integer, slice or iterable")

    def encode(self) -> str:
        """Return the compressed RFC 29 string, e.g. ``"node[0-3,7]"``."""
        return _encode(self._names, self._splits)

    def count(self) -> int:
        """Return the number of hosts, duplicates included."""
        return len(self._names)

    def expand(self) -> list[str]:
        """Return the hosts as a list of names, in order."""
        return list(self._names)

    def copy(self) -> Hostlist:
        """Return an independent copy."""
        return Hostlist._of(list(self._names), list(self._splits))

    def append(self, *args: HostlistLike) -> int:
        """Add hosts to the end; each arg is anything :class:`Hostlist`
        accepts.  Returns how many hosts were added."""
        added = 0
        for arg in args:
            other = arg if isinstance(arg, Hostlist) else Hostlist(arg)
            self._names += other._names
            self._splits += other._splits
            added += len(other._names)
        return added

    def delete(self, hosts: HostlistLike) -> int:
        """Remove the first occurrence of each host in *hosts*.

        A host named twice in *hosts* removes two occurrences.  Hosts that
        are absent are ignored.  Returns how many hosts were removed.
        """
        doomed = Counter(hosts if isinstance(hosts, Hostlist) else Hostlist(hosts))
        if not doomed:
            return 0
        names: list[str] = []
        splits: list[int] = []
        removed = 0
        # deleting the first occurrence k times equals dropping the first k
        for name, k in zip(self._names, self._splits, strict=True):
            if doomed.get(name):
                doomed[name] -= 1
                removed += 1
            else:
                names.append(name)
                splits.append(k)
        self._names, self._splits = names, splits
        return removed

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

        Raises :class:`FileNotFoundError` if it is absent, as flux-python's
        (errno ``ENOENT``) does.
        """
        if not isinstance(host, str):
            raise TypeError(f"Hostlist.find takes a string, not {type(host).__name__}")
        try:
            return self._names.index(host)
        except ValueError:
            raise FileNotFoundError(
                errno.ENOENT, f"host '{host}' not in hostlist"
            ) from None

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
        for name, k in zip(hosts._names, hosts._splits, strict=True):
            if name in first:
                found.append(first[name])
            else:
                missing._names.append(name)
                missing._splits.append(k)
        if missing and not ignore_nomatch:
            plural = "s" if len(missing) > 1 else ""
            raise FileNotFoundError(
                errno.ENOENT, f"host{plural} '{missing}' not found in hostlist"
            )
        return found


def decode(arg: HostlistLike) -> Hostlist:
    """Parse an RFC 29 string (or iterable of them) into a new Hostlist."""
    return Hostlist(arg)
