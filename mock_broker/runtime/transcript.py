"""The record of a mock broker run: every message and event, in order.

Entries are kept as small tuples and formatted only when read, so
recording costs little on the hot path.  ``lines()`` gives the readable
form, ``to_jsonl()`` one JSON object per entry; both are byte-identical
across runs of the same scenario.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass

from mock_broker.flux_substitute import constants

_ARROWS = {
    constants.FLUX_MSGTYPE_REQUEST: "request",
    constants.FLUX_MSGTYPE_RESPONSE: "response",
    constants.FLUX_MSGTYPE_EVENT: "event",
}


#: What an error number means as the answer to one RFC 27 request, where
#: the protocol gives it a meaning of its own (not an error at all, here).
PROTOCOL_MEANINGS: dict[tuple[str, int], str] = {
    ("job-manager.sched-hello (response)", errno.ENODATA): "end of hello",
}


def errnum_text(errnum: int, topic: str = "", errstr: str = "") -> str:
    """``61 (ENODATA: end of hello)``: the number, its symbolic name, and
    what it means for *topic* (else *errstr*, else the C library's text)."""
    name = errno.errorcode.get(errnum, "unknown errno")
    meaning = PROTOCOL_MEANINGS.get((topic, errnum)) or errstr or os.strerror(errnum)
    return f"{errnum} ({name}: {meaning})"


@dataclass(frozen=True)
class Entry:
    """One transcript entry."""

    seq: int
    time: float  # virtual seconds since the broker started
    kind: str  # "msg", "event", "log", "violation"
    source: str
    dest: str
    topic: str
    text: str  # payload JSON, log text or description
    errnum: int = 0
    errstr: str = ""  # the error response's own text, if it carried one

    def to_dict(self) -> dict:
        d = {
            "seq": self.seq,
            "t": round(self.time, 6),
            "kind": self.kind,
            "from": self.source,
            "to": self.dest,
            "topic": self.topic,
        }
        if self.kind == "msg":
            d["payload"] = json.loads(self.text) if self.text else None
        else:
            d["text"] = self.text
        if self.errnum:
            d["errnum"] = self.errnum
            d["errname"] = errno.errorcode.get(self.errnum, "")
        if self.errstr:
            d["errstr"] = self.errstr
        return d

    def line(self) -> str:
        stamp = f"{self.time:12.3f}"
        if self.kind == "msg":
            err = ""
            if self.errnum:
                text = errnum_text(self.errnum, self.topic, self.errstr)
                err = f" errnum={text}"
            body = self.text if self.text else ""
            if len(body) > 300:
                body = body[:297] + "..."
            return (
                f"{stamp} #{self.seq:<6} {self.source} -> {self.dest} "
                f"{self.topic}{err} {body}".rstrip()
            )
        return f"{stamp} #{self.seq:<6} [{self.kind}] {self.source}: {self.text}"


class Later:
    """Note text formatted only when the transcript is read:
    ``fmt.format(*args)``.  A note written for every job (its f58 id at
    submission and at its end) then costs a tuple, not an encoding."""

    __slots__ = ("fmt", "args")

    def __init__(self, fmt: str, *args):
        self.fmt = fmt
        self.args = args

    def __str__(self) -> str:
        return self.fmt.format(*self.args)


class Transcript:
    """Append-only list of :class:`Entry`."""

    def __init__(self, clock):
        self._clock = clock
        self._rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self._rows)

    def message(self, source: str, dest: str, msg) -> int:
        kind = _ARROWS.get(msg.type, "msg")
        topic = msg.topic if kind == "request" else f"{msg.topic} ({kind})"
        self._rows.append(
            (
                self._clock.elapsed,
                "msg",
                source,
                dest,
                topic,
                msg.payload_str or "",
                msg.errstr or "",
                msg.errnum,
            )
        )
        return len(self._rows) - 1

    def note(self, kind: str, source: str, text: str | Later) -> int:
        self._rows.append((self._clock.elapsed, kind, source, "", "", text, "", 0))
        return len(self._rows) - 1

    def entry(self, seq: int) -> Entry:
        t, kind, source, dest, topic, text, errstr, errnum = self._rows[seq]
        if text.__class__ is not str:
            text = str(text)
        return Entry(seq, t, kind, source, dest, topic, text, errnum, errstr)

    def entries(self, start: int = 0, stop: int | None = None) -> list[Entry]:
        stop = len(self._rows) if stop is None else min(stop, len(self._rows))
        return [self.entry(i) for i in range(max(0, start), stop)]

    def lines(self, start: int = 0, stop: int | None = None) -> list[str]:
        return [e.line() for e in self.entries(start, stop)]

    def excerpt(self, around: int, before: int = 12, after: int = 4) -> str:
        """The lines around entry *around*, the entry itself marked."""
        out = []
        for e in self.entries(around - before, around + after + 1):
            mark = ">>" if e.seq == around else "  "
            out.append(f"{mark} {e.line()}")
        return "\n".join(out)

    def to_jsonl(self) -> str:
        return "".join(
            json.dumps(e.to_dict(), sort_keys=True) + "\n" for e in self.entries()
        )
