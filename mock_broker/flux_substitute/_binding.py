"""How flux-python's cffi layer turns bad arguments and C failures into errors.

The libflux-backed modules of flux-python 0.88.0 hand their arguments to C
through cffi, mostly via ``flux.wrapper.FunctionWrapper``.  What a caller
sees when something is wrong therefore follows a few fixed rules, which the
substitute modules reproduce with the helpers here:

- an integer argument accepts ``int`` (``bool`` included) and any object
  with ``__int__`` except a ``float``; anything else is a :class:`TypeError`
  and a value outside the C type's range is an :class:`OverflowError`
  (:func:`c_int`, :func:`c_uint`, :func:`c_uint64`);
- a ``char *`` argument passed through the wrapper accepts ``str`` (encoded
  as UTF-8 with ``surrogateescape``), ``bytes`` and ``None`` (NULL); cffi
  rejects any other type with a TypeError, which the wrapper re-raises as
  :class:`InvalidArguments`, a :class:`ValueError` (:func:`c_string_arg`).
  C reads the bytes up to the first NUL;
- a C call that fails with ``errno`` set raises ``OSError(errno, "ENAME:
  strerror")``, so ``ENOENT`` arrives as :class:`FileNotFoundError`
  (:func:`errno_error`).
"""

from __future__ import annotations

import errno
import os

__all__ = [
    "InvalidArguments",
    "c_int",
    "c_string_arg",
    "c_uint",
    "c_uint64",
    "errno_error",
]


class InvalidArguments(ValueError):
    """A wrapped C function rejected the type of an argument.

    Mirrors ``flux.wrapper.InvalidArguments``, which flux-python raises
    (from cffi's TypeError) when an argument cannot be converted to the C
    parameter type.  Like that class it is a :class:`ValueError`.
    """


def errno_error(errnum: int) -> OSError:
    """Return the OSError flux-python's wrapper raises for a C failure."""
    name = errno.errorcode.get(errnum, f"Errno{errnum}")
    return OSError(errnum, f"{name}: {os.strerror(errnum)}")


def _c_integer(value, lo: int, hi: int, ctype: str) -> int:
    if isinstance(value, int):
        number = int(value)
    elif isinstance(value, float) or not hasattr(type(value), "__int__"):
        raise TypeError(f"an integer is required for C '{ctype}', not {value!r}")
    else:
        number = int(value)
    if number < lo:
        if lo == 0:
            raise OverflowError("can't convert negative number to unsigned")
        raise OverflowError(f"integer {number} does not fit '{ctype}'")
    if number > hi:
        raise OverflowError(f"integer {number} does not fit '{ctype}'")
    return number


def c_int(value) -> int:
    """Convert *value* as cffi converts an ``int`` argument."""
    return _c_integer(value, -(2**31), 2**31 - 1, "int")


def c_uint(value) -> int:
    """Convert *value* as cffi converts an ``unsigned int`` argument."""
    return _c_integer(value, 0, 2**32 - 1, "unsigned int")


def c_uint64(value) -> int:
    """Convert *value* as cffi converts a ``uint64_t`` argument."""
    return _c_integer(value, 0, 2**64 - 1, "uint64_t")


def c_string_arg(value, function: str) -> bytes | None:
    """Convert *value* as ``FunctionWrapper`` passes a ``char *`` argument.

    Returns the bytes C would read (up to the first NUL), or None for NULL.
    Raises :class:`InvalidArguments` for a type cffi cannot pass, and
    :class:`UnicodeEncodeError` for a string UTF-8 cannot encode even with
    ``surrogateescape``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        data = value.encode("utf-8", errors="surrogateescape")
    elif isinstance(value, bytes):
        data = value
    elif isinstance(value, (list, tuple)) and all(
        isinstance(item, bytes) and len(item) == 1 for item in value
    ):
        # cffi builds a temporary char array from a list of 1-byte bytes
        data = b"".join(value)
    else:
        raise InvalidArguments(
            f"{function}(): cannot pass {type(value).__name__} {value!r} as a C string"
        )
    return data.partition(b"\0")[0]
