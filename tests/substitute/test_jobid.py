"""Tests for the ``flux.job.JobID`` substitute (RFC 19 job ids), against what
flux-python 0.88.0 does through libflux's flux_job_id_parse/encode()."""

from __future__ import annotations

import errno

import pytest

from mock_broker.flux_substitute import jobid as jobid_module
from mock_broker.flux_substitute._binding import InvalidArguments
from mock_broker.flux_substitute.jobid import JobID, id_encode, id_parse

# RFC 19's F58 example: 6731191091817518 is "ƒuZZybuNNy"
BIG = 6731191091817518
F58_VECTORS = [
    (0, "1"),
    (1, "2"),
    (57, "z"),
    (1234, "NH"),
    (3364, "211"),
    (65535, "LUv"),
    (4294967295, "7YXq9G"),
    (633528662, "xyzzy"),
    (BIG, "uZZybuNNy"),
    (2**64 - 1, "jpXCZedGfVQ"),
]


@pytest.fixture
def utf8_f58(monkeypatch):
    """Encode F58 with the "ƒ" prefix, as in a UTF-8 locale."""
    monkeypatch.delenv("FLUX_F58_FORCE_ASCII", raising=False)
    monkeypatch.setattr(
        jobid_module, "_f58_prefix", lambda plain: "f" if plain else "ƒ"
    )


def test_encodings(utf8_f58):
    j = JobID(BIG)
    assert j == BIG and isinstance(j, int)
    assert j.dec == str(BIG)
    assert j.hex == "0x17e9fb8df16c2e"
    assert j.dothex == "0017.e9fb.8df1.6c2e"
    assert j.kvs == "job.0017.e9fb.8df1.6c2e"
    assert j.f58 == str(j) == "ƒuZZybuNNy"
    assert j.f58plain == "fuZZybuNNy"
    assert repr(j) == f"JobID({BIG})"


@pytest.mark.parametrize("value, digits", F58_VECTORS)
def test_f58_vectors(utf8_f58, value, digits):
    assert JobID(value).f58 == "ƒ" + digits
    assert JobID(value).f58plain == "f" + digits
    assert JobID("ƒ" + digits) == JobID("f" + digits) == value


def test_f58_prefix_follows_the_environment(monkeypatch):
    # binding: libflux writes "f" when FLUX_F58_FORCE_ASCII is set (or the
    # locale is not UTF-8)
    monkeypatch.setenv("FLUX_F58_FORCE_ASCII", "1")
    assert JobID(BIG).f58 == "fuZZybuNNy"


@pytest.mark.parametrize(
    "text",
    [
        "ƒuZZybuNNy",
        "fuZZybuNNy",
        "  ƒuZZybuNNy",
        str(BIG),
        f" {BIG}\n",
        f"+{BIG}",
        "0x17e9fb8df16c2e",
        "0x17e9fb8df16c2e ",
        "0017.e9fb.8df1.6c2e",
        "job.0017.e9fb.8df1.6c2e",
        "17.e9fb.8df1.6c2e",  # sscanf("%4x") takes 1-4 digits
        f"job.{BIG}",  # "job." is stripped before any encoding
        b"0017.e9fb.8df1.6c2e",
    ],
)
def test_parse(text):
    assert JobID(text) == BIG
    assert JobID(text).orig == str(text)
    assert id_parse(text) == BIG


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "job.",
        "ƒ",
        "ƒuZZybuNNy ",  # trailing blanks only after a number
        "0017.e9fb.8df1.6c2e ",
        "0X1F",  # only "0x" selects hex
        "0x1_f",
        "1_000",
        "\u0661\u0662",  # not ASCII digits
        "18446744073709551616",  # past 64 bits
        "ƒ1234567891234",  # more than 12 F58 digits
        "ƒ0",  # not an F58 digit
        "-5",  # "-" means words, and this is none
        "abc",
    ],
)
def test_parse_errors(text):
    # binding: flux_job_id_parse() fails -> OSError from flux.wrapper;
    # JobID() turns it into ValueError
    with pytest.raises(OSError):
        id_parse(text)
    with pytest.raises(ValueError, match="is not a valid Flux jobid"):
        JobID(text)


def test_parse_error_numbers():
    with pytest.raises(OSError) as err:
        id_parse("abc")
    assert err.value.errno == errno.EINVAL
    # binding: strtoull() overflow leaves ERANGE
    with pytest.raises(OSError) as err:
        id_parse("18446744073709551616")
    assert err.value.errno == errno.ERANGE
    # binding: NULL -> EINVAL
    with pytest.raises(OSError):
        id_parse(None)
    with pytest.raises(ValueError):
        JobID(None)


@pytest.mark.parametrize("value", [1.0, 1.5, [1], object()])
def test_non_string_non_int_values(value):
    # binding: JobID() hands anything but an int to id_parse(); cffi cannot
    # pass it as char *, and flux.wrapper raises InvalidArguments (a
    # ValueError that is not an OSError, so JobID() lets it through)
    with pytest.raises(InvalidArguments):
        JobID(value)


def test_libflux_parse_quirks():
    # binding: fluid_parse() reads the F58 prefix first, so "foo" is F58
    assert id_parse("foo") == 46 * 58 + 46
    # "job." then blanks only: strtoull() reads nothing and only blanks
    # follow, which libflux accepts as 0
    assert id_parse("job.  ") == 0
    # 12 F58 digits can exceed 64 bits; libflux's sum wraps
    assert id_parse("ƒzzzzzzzzzzzz") == (58**12 - 1) % 2**64


def test_ints_are_taken_unchecked():
    # binding: JobID() keeps any int as is; encoding passes it to cffi as a
    # uint64_t, which raises OverflowError for a negative or huge value
    assert JobID(-1) == -1 and JobID(2**64) == 2**64
    assert JobID(True) == 1 and JobID(True).orig == "True"
    for bad in (-1, 2**64):
        with pytest.raises(OverflowError):
            JobID(bad).f58  # noqa: B018
        with pytest.raises(OverflowError):
            repr(JobID(bad))
        with pytest.raises(OverflowError):
            id_encode(bad)


def test_jobid_of_a_jobid_parses_its_original_string(utf8_f58):
    # binding: JobID(jobid) is JobID(jobid.orig_str)
    j = JobID("ƒuZZybuNNy")
    assert j.orig_str == j.orig == "ƒuZZybuNNy"
    assert JobID(j) == BIG and JobID(j).orig == "ƒuZZybuNNy"
    assert JobID(JobID(BIG)).orig == str(BIG)
    with pytest.raises(ValueError):
        JobID(JobID(-1))  # "-1" does not parse
    with pytest.raises(ValueError):
        JobID(JobID(True))  # nor does "True"


def test_encode_names(utf8_f58):
    # binding: flux_job_id_encode() compares names with strcasecmp() and
    # treats NULL as "dec"; int(jobid) is taken first
    assert id_encode(BIG, "HEX") == "0x17e9fb8df16c2e"
    assert id_encode(BIG, None) == str(BIG)
    assert id_encode(str(BIG), "F58") == "ƒuZZybuNNy"
    assert id_encode(2.9, "dec") == "2"
    assert JobID(5).encode() == "5"
    # an unknown name is EPROTO -> OSError
    with pytest.raises(OSError) as err:
        id_encode(5, "base64")
    assert err.value.errno == errno.EPROTO
    # binding: a name that is not a string cannot be passed as char *
    with pytest.raises(InvalidArguments):
        id_encode(5, 16)


def test_words_and_emoji_are_not_available():
    # libflux has them; the substitute says so instead of guessing
    with pytest.raises(NotImplementedError):
        JobID(5).words  # noqa: B018
    with pytest.raises(NotImplementedError):
        JobID(5).emoji  # noqa: B018
    with pytest.raises(NotImplementedError):
        id_parse("academy-acrobat-acrobat--academy-acrobat-acrobat")
    with pytest.raises(NotImplementedError):
        id_parse("😀😀")


def test_flux_job_kvs_key():
    from mock_broker.flux_substitute.native_core import ffi, lib

    buf = ffi.new("char[128]")
    # libjob: returns the length written, not 0
    assert lib.flux_job_kvs_key(buf, 128, BIG, b"R") == 25
    assert ffi.string(buf) == b"job.0017.e9fb.8df1.6c2e.R"
    assert lib.flux_job_kvs_key(buf, 128, BIG, None) == 23
    assert ffi.string(buf) == b"job.0017.e9fb.8df1.6c2e"
    # too small a buffer: snprintf() truncates and libjob fails (EOVERFLOW)
    assert lib.flux_job_kvs_key(buf, 10, BIG, b"R") == -1
    # binding: a direct cffi call; str is no char *, floats no integers,
    # and the id must fit a uint64_t
    with pytest.raises(TypeError):
        lib.flux_job_kvs_key(buf, 128, BIG, "R")
    with pytest.raises(TypeError):
        lib.flux_job_kvs_key(buf, 128, 1.0, b"R")
    with pytest.raises(OverflowError):
        lib.flux_job_kvs_key(buf, 128, -1, b"R")


class _RecordingHandle:
    """Just enough of a handle for an RPC to be sent."""

    def __init__(self):
        self.sent = []

    def _send_request(self, future, topic, payload, nodeid, flags):
        self.sent.append((topic, payload))


def test_job_raise_async_arguments():
    from mock_broker.flux_substitute.job import job_raise_async

    h = _RecordingHandle()
    job_raise_async(h, JobID(5), "cancel")
    job_raise_async(h, "7", "timeout", 1, "late")
    # binding: note.encode() if note else NULL, so "" sends no note
    job_raise_async(h, 9, "x", note="")
    assert h.sent == [
        ("job-manager.raise", {"id": 5, "type": "cancel", "severity": 0}),
        (
            "job-manager.raise",
            {"id": 7, "type": "timeout", "severity": 1, "note": "late"},
        ),
        ("job-manager.raise", {"id": 9, "type": "x", "severity": 0}),
    ]
    # binding: job_raise_async(flux_handle, jobid, exc_type, severity=0,
    # note=None): the type has no default and is named exc_type
    with pytest.raises(TypeError):
        job_raise_async(h, 5)
    with pytest.raises(TypeError):
        job_raise_async(h, 5, type="cancel")
    # binding: exc_type.encode() / note.encode() on a non-string
    with pytest.raises(AttributeError):
        job_raise_async(h, 5, 3)
    with pytest.raises(AttributeError):
        job_raise_async(h, 5, "cancel", 0, 42)
    # binding: lib.flux_job_raise(h, int(jobid), type, severity, note) via
    # cffi: uint64_t id, int severity
    with pytest.raises(OverflowError):
        job_raise_async(h, -1, "cancel")
    with pytest.raises(TypeError):
        job_raise_async(h, 5, "cancel", 0.5)
    with pytest.raises(OverflowError):
        job_raise_async(h, 5, "cancel", 2**31)
    assert len(h.sent) == 3
