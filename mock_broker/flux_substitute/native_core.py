"""Stands in for ``_flux._core``: the cffi ``ffi``/``lib`` pair.

Only the entry points that the wheel's kept modules call are provided
(the startup check verifies that list against the wheel's source).  A
"pointer" here is simply the Python object itself: a handle's ``.handle``
and a message's ``.handle`` are the substitute objects, and a ``char[]``
buffer is a :class:`CharBuffer`.
"""

from __future__ import annotations

from mock_broker.flux_substitute import constants as _constants

IS_SUBSTITUTE = True


class CharBuffer:
    """A writable ``char[N]`` as created by ``ffi.new("char[N]")``."""

    __slots__ = ("size", "value")

    def __init__(self, size: int):
        self.size = size
        self.value = b""

    def __getitem__(self, index: int) -> bytes:
        return self.value[index : index + 1] or b"\0"


class _FFI:
    """The few cffi operations the kept modules perform."""

    NULL = None

    def new(self, ctype: str, init=None):
        if ctype.startswith("char[") and ctype.endswith("]"):
            return CharBuffer(int(ctype[5:-1]))
        raise ValueError(f"ffi.new({ctype!r}) is outside the substituted native layer")

    def cast(self, ctype: str, value):
        return value

    def string(self, value) -> bytes:
        if isinstance(value, CharBuffer):
            return value.value
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode()
        raise TypeError(f"ffi.string: cannot read {type(value).__name__}")


class _Lib:
    """Native entry points, forwarded to the substitute handle objects."""

    def __getattr__(self, name: str):
        # Constants such as FLUX_ROLE_OWNER come from the one constants table.
        try:
            return getattr(_constants, name)
        except AttributeError:
            raise AttributeError(
                f"_flux._core.lib.{name} is not part of the substituted native "
                "layer (see mock_broker.flux_substitute)"
            ) from None

    @staticmethod
    def flux_aux_get(handle, key: bytes):
        value = handle.aux_get(key.decode())
        if value is None:
            return None
        return value.encode() if isinstance(value, str) else value

    @staticmethod
    def flux_module_set_running(handle) -> int:
        return handle.module_set_running()

    @staticmethod
    def flux_module_debug_test(handle, flag: int, clear: bool) -> bool:
        return handle.module_debug_test(flag, clear)

    @staticmethod
    def flux_respond_error(handle, msg, errnum: int, errstr) -> int:
        if isinstance(errstr, bytes):
            errstr = errstr.decode()
        return handle.respond_error_raw(msg, errnum, errstr)

    @staticmethod
    def flux_get_reactor(handle):
        # flux-core's own Python schedulers (sched-fifo.py, sched-backfill.py)
        # stamp R with flux_reactor_now(flux_get_reactor(h)).
        return handle._reactor

    @staticmethod
    def flux_reactor_now(reactor) -> float:
        return reactor.clock.now

    @staticmethod
    def flux_job_kvs_key(buf: CharBuffer, bufsize: int, jobid: int, key) -> int:
        """Write ``job.<dothex>[.<key>]`` into *buf*; return its length.

        As libflux's, called straight through cffi: *jobid* must fit a
        uint64_t and *bufsize* an int (else OverflowError or TypeError),
        *key* must be bytes or None (a str is a TypeError), and -1 is
        returned for a buffer that is too small (EOVERFLOW).
        """
        from mock_broker.flux_substitute._binding import c_int, c_uint64
        from mock_broker.flux_substitute.jobid import id_encode

        bufsize = c_int(bufsize)
        jobid = c_uint64(jobid)
        if key is not None and not isinstance(key, bytes):
            raise TypeError(
                "initializer for ctype 'char *' must be a bytes or list or "
                f"tuple, not {type(key).__name__}"
            )
        if bufsize <= 0:
            return -1  # EINVAL
        data = id_encode(jobid, "kvs").encode()
        if key is not None:
            data += b"." + key.partition(b"\0")[0]
        if len(data) >= bufsize:
            buf.value = data[: bufsize - 1]  # snprintf() truncates
            return -1  # EOVERFLOW
        buf.value = data
        return len(data)


ffi = _FFI()
lib = _Lib()

#: Entry points the substitute implements, checked against the wheel.
PROVIDED_LIB = frozenset(
    {
        "flux_aux_get",
        "flux_module_set_running",
        "flux_module_debug_test",
        "flux_respond_error",
        "flux_job_kvs_key",
        "flux_get_reactor",
        "flux_reactor_now",
    }
)
PROVIDED_FFI = frozenset({"NULL", "new", "cast", "string"})
