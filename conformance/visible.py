"""Text a scheduler module wrote, made safe to show.

Evidence carries what a module logged, raised or sent.  Control characters
in it would reach the user's terminal as escape sequences (a module could
hide the cursor, switch to the alternate screen or rewrite earlier lines)
and would make the JUnit file ill-formed XML (XML 1.0 admits neither C0
controls other than tab, newline and carriage return, nor lone surrogates).
:func:`visible` spells each such character as a Python escape instead.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, lone surrogates and the
# two non-characters XML refuses.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """*text* with every control character, lone surrogate and XML
    non-character written as ``\\xNN`` or ``\\uNNNN``; tab and newline kept."""
    return _HIDDEN.sub(_escape, text)


__all__ = ["visible"]
