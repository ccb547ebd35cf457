"""Tests for the pure-Python ``flux.idset`` substitute (RFC 22 idsets)."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mock_broker.flux_substitute import idset
from mock_broker.flux_substitute.idset import (
    IDSET_FLAG_BRACKETS,
    IDSET_FLAG_RANGE,
    IDSET_INVALID_ID,
    IDset,
    IDsetIterator,
)

ALL_FLAGS = [
    0,
    IDSET_FLAG_RANGE,
    IDSET_FLAG_BRACKETS,
    IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS,
]
HYPO = settings(derandomize=True, deadline=None, max_examples=200, database=None)
id_sets = st.sets(st.integers(min_value=0, max_value=300), max_size=60)


def test_constants_match_libidset():
    # values from libidset's idset.h, which the wheel's cffi module exports
    assert IDSET_FLAG_BRACKETS == 2
    assert IDSET_FLAG_RANGE == 4
    assert IDSET_INVALID_ID == 2**32 - 2


# --- RFC 22 -------------------------------------------------------------------


def test_rfc22_plain_ranged_and_bracketed_forms_agree():
    # RFC 22: ids ascend, separated by commas; runs of consecutive ids may
    # be written as hyphenated ranges; the whole may sit in square brackets.
    plain = IDset("1,2,3,5,6,42")
    assert plain == IDset("1-3,5-6,42") == IDset("[1-3,5-6,42]")
    assert plain.equal(IDset("1-3,5-6,42"))
    assert list(plain) == [1, 2, 3, 5, 6, 42]
    assert str(plain) == "1-3,5-6,42"


@pytest.mark.parametrize(
    "text", ["01", "00", "1,02", "[007]"], ids=lambda t: f"leading-zero:{t}"
)
def test_rfc22_rejects_leading_zeros(text):
    # binding: idset_decode() returns NULL -> ValueError("IDset(): Invalid ...")
    with pytest.raises(ValueError, match="Invalid argument"):
        IDset(text)


@pytest.mark.parametrize("text", ["2,2", "3,2", "1-3,2", "0-4,4-6", "5,1-2"])
def test_rfc22_ids_must_be_unique_and_ascending(text):
    with pytest.raises(ValueError) as err:
        IDset(text)
    assert text in str(err.value)


def test_zero_is_a_valid_id():
    assert list(IDset("0")) == [0]
    assert list(IDset("[0]")) == [0]


# --- decoding -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ids",
    [
        ("", []),
        ("[]", []),
        ("2", [2]),
        ("7-9", [7, 8, 9]),
        ("1,7-9,14,16", [1, 7, 8, 9, 14, 16]),
        ("[2,3,4,5]", [2, 3, 4, 5]),
        ("1048576", [1048576]),
        ("1-3,4-5", [1, 2, 3, 4, 5]),
        # libidset tokenises with strtok(), so empty elements are skipped
        ("1,,2", [1, 2]),
        (",", []),
        ("3,", [3]),
    ],
)
def test_decode(text, ids):
    assert IDset(text).expand() == ids
    assert idset.decode(text).expand() == ids


@pytest.mark.parametrize(
    "text, culprit",
    [
        ("1-", "1-"),
        ("a", "a"),
        ("4.2", "4.2"),
        ("1-2x", "1-2x"),
        ("3-1", "3-1"),
        ("3-3", "3-3"),  # libidset wants hi > lo in a range
        ("[1-2", "[1-2"),
        ("0]", "0]"),
        ("[[0]]", "[[0]]"),
        ("0,[2", "0,[2"),
        ("-5", "-5"),
        ("[-5]", "-5"),
        (" 1", " 1"),
        ("1 ", "1 "),
        ("+1", "+1"),
        ("2,2,2", "2,2,2"),
        ("2147483648", "2147483648"),
        ("\u0661", "\u0661"),  # ARABIC-INDIC DIGIT ONE is not an ASCII digit
    ],
)
def test_malformed_strings_name_the_offending_text(text, culprit):
    with pytest.raises(ValueError) as err:
        IDset(text)
    assert culprit in str(err.value)


@pytest.mark.parametrize("arg", [1.5, None, object(), 2 + 0j])
def test_wrong_types_raise_type_error(arg):
    # binding: neither iterable nor int, so arg.encode("utf-8") fails with
    # AttributeError, which IDset() re-raises as TypeError
    with pytest.raises(TypeError):
        IDset(arg)


@pytest.mark.parametrize("arg", [True, False, [1, 2.0], [True], [-1], ["a"]])
def test_ints_and_iterables_go_through_their_string_form(arg):
    # binding: an int becomes str(arg) and an iterable
    # ",".join(str(i) for i in sorted(arg)), which idset_decode() refuses
    # ("True", "1,2.0", "-1"...) -> ValueError, not TypeError
    with pytest.raises(ValueError, match="Invalid argument"):
        IDset(arg)


def test_other_argument_kinds():
    assert IDset(5).expand() == [5]
    assert IDset([3, 1, 2]).expand() == [1, 2, 3]
    assert IDset({9, 0}).expand() == [0, 9]
    assert str(IDset(range(4))) == "0-3"
    original = IDset("1-4")
    clone = IDset(original)
    clone.clear(1)
    assert str(original) == "1-4"
    with pytest.raises(ValueError):
        IDset(-1)
    with pytest.raises(ValueError, match="-2"):
        IDset([1, -2])
    # flux-python joins the ids into a string for idset_decode(), which
    # refuses repeats, so a list with a repeat is rejected here too
    with pytest.raises(ValueError, match="1,1"):
        IDset([1, 1])


def test_largest_id():
    top = 2**31 - 1
    assert IDset(str(top)).last() == top
    assert IDset().set(top).last() == top
    # binding: idset_set() cannot grow the set past INT_MAX + 1 slots and
    # fails with ERANGE, which flux.wrapper raises as OSError
    with pytest.raises(OSError) as err:
        IDset().set(top + 1)
    assert err.value.errno == errno.ERANGE
    assert not isinstance(err.value, ValueError)


# --- encoding -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, flags, expected",
    [
        ("7-9", 0, "7,8,9"),
        ("1-3,7-9,14,16", 0, "1,2,3,7,8,9,14,16"),
        ("2,3,4,5", IDSET_FLAG_RANGE, "2-5"),
        ("0,1", IDSET_FLAG_RANGE, "0-1"),
        ("1,7-9,16", IDSET_FLAG_RANGE, "1,7-9,16"),
        ("2", IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, "2"),
        ("7-9", IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, "[7-9]"),
        ("1,7-9", IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, "[1,7-9]"),
        ("", IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, ""),
        ("4,5", IDSET_FLAG_BRACKETS, "[4,5]"),
    ],
)
def test_encode_flags(text, flags, expected):
    assert IDset(text).encode(flags) == expected
    assert IDset(text, flags=flags).encode() == expected


def test_default_flags_and_set_flags():
    ids = IDset("0-3,5")
    assert str(ids) == "0-3,5"
    ids.set_flags(IDSET_FLAG_BRACKETS | IDSET_FLAG_RANGE)
    assert str(ids) == "[0-3,5]"
    assert repr(ids) == "IDset('0-3,5')"  # repr always uses plain ranges
    # as in flux-python, derived sets start over with the default flags
    assert str(ids.copy()) == "0-3,5"
    assert str(ids | "9") == "0-3,5,9"
    # binding: idset_encode() refuses other flags (EINVAL, NULL) and
    # ffi.string(NULL) raises RuntimeError; set_flags() stores them unchecked
    with pytest.raises(RuntimeError):
        ids.encode(8)
    ids.set_flags(1)
    with pytest.raises(RuntimeError):
        str(ids)
    assert repr(ids) == "IDset('0-3,5')"  # repr passes its own flags


# --- single ids and ranges ----------------------------------------------------


def test_set_clear_and_item_access():
    ids = IDset()
    assert ids.set(0, 3) is ids
    ids.set(10)
    ids[5] = True
    ids[3] = 0
    assert ids.expand() == [0, 1, 2, 5, 10]
    assert ids[5] and not ids[4]
    assert 10 in ids and 11 not in ids and 2**32 - 1 not in ids
    ids.clear(1, 100)
    assert ids.expand() == [0]
    ids.clear(7)  # absent: ignored
    assert len(ids) == ids.count() == 1
    with pytest.raises(TypeError):
        ids[2] = 2
    with pytest.raises(ValueError):
        ids.set(5, 4)
    with pytest.raises(ValueError):
        ids.clear(-1)
    with pytest.raises(TypeError):
        ids.test("3")
    with pytest.raises(ValueError):
        ids.test(-1)


def test_set_merges_neighbours():
    ids = IDset("1-2,6-7")
    ids.set(3, 5)
    assert str(ids) == "1-7"
    ids.clear(4)
    assert str(ids) == "1-3,5-7"
    ids.set(4)
    assert str(ids) == "1-7"


def test_first_next_last():
    empty = IDset()
    assert empty.first() == empty.last() == IDSET_INVALID_ID
    ids = IDset("2-3,8")
    assert ids.first() == 2 and ids.last() == 8
    assert ids.next(2) == 3
    assert ids.next(3) == 8
    assert ids.next(5) == 8  # the starting id need not be a member
    assert ids.next(8) == IDSET_INVALID_ID
    assert ids.next(0) == 2


def test_iteration_is_ascending_and_survives_mutation():
    ids = IDset([9, 1, 5, 2])
    assert list(ids) == [1, 2, 5, 9]
    for i in ids:
        ids.clear(i)
    assert len(ids) == 0 and not ids


def test_iteration_walks_the_live_set_one_id_ahead():
    # binding: IDsetIterator keeps the next id (pimpl.next(result)) in hand
    # and asks the live set for the one after it at each step
    ids = IDset("0-9")
    seen = []
    for i in ids:
        seen.append(i)
        if i == 2:
            ids.clear(3, 4)  # 3 was already looked up: still returned
            ids.set(20)  # added ahead: returned
        if i == 6:
            ids.clear(8)  # not looked up yet: skipped
    assert seen == [0, 1, 2, 3, 5, 6, 7, 9, 20]
    # the exported class behaves alike; it looks up the first id at once
    ids = IDset("0-3")
    it = IDsetIterator(ids)
    ids.clear(0)
    ids.set(7)
    assert list(it) == [0, 1, 2, 3, 7]
    assert list(iter(IDset())) == [] and list(IDsetIterator(IDset())) == []


# --- set algebra --------------------------------------------------------------


def test_set_algebra():
    a = IDset("0-5")
    assert str(a.union("4-8", [20])) == "0-8,20"
    assert str(a.intersect("3-9", IDset("0-4"))) == "3-4"
    assert str(a.difference("1", [3, 4])) == "0,2,5"
    assert str(a + "6") == str(a | [6]) == "0-6"
    assert a + "6" == a | [6]
    assert str(a - "0-2") == "3-5"
    assert str(a & "5-7") == "5"
    assert str(a) == "0-5"  # none of the above touched a
    b = a
    b += "10"
    b -= [0]
    assert b is a and str(a) == "1-5,10"
    assert a.add("0").subtract(IDset("10")) is a
    assert str(a) == "0-5"


def test_equality_and_hashing():
    assert IDset("1-3") == IDset([1, 2, 3]) == IDset("[1-3]")
    assert IDset("1-3").equal(IDset("1,2,3"))
    assert IDset("4") != IDset("5")
    assert not IDset("1").equal(IDset())
    with pytest.raises(TypeError):
        hash(IDset())


@pytest.mark.parametrize("other", ["1-3", "[1-3]", [1, 2, 3], 4, None, "junk"])
def test_equality_with_a_non_idset_raises_type_error(other):
    # binding: IDset.__eq__ is equal(), which raises TypeError unless its
    # argument is an IDset (nothing is converted, not even a valid string)
    ids = IDset("1-3")
    with pytest.raises(TypeError):
        ids == other  # noqa: B015
    with pytest.raises(TypeError):
        ids != other  # noqa: B015
    with pytest.raises(TypeError):
        other == ids  # noqa: B015  (the reflected __eq__ raises too)
    with pytest.raises(TypeError):
        ids.equal(other)


# --- properties ---------------------------------------------------------------


@HYPO
@given(ids=id_sets, flags=st.sampled_from(ALL_FLAGS))
def test_encode_decode_round_trip(ids, flags):
    encoded = IDset(ids).encode(flags)
    assert set(IDset(encoded)) == ids
    assert IDset(encoded) == IDset(sorted(ids))


@HYPO
@given(a=id_sets, b=id_sets, c=id_sets)
def test_algebra_matches_python_sets(a, b, c):
    x = IDset(a)
    assert set(x.union(b, c)) == a | b | c
    assert set(x.intersect(b, c)) == a & b & c
    assert set(x.difference(b, c)) == a - b - c
    assert len(x) == len(a)
    assert list(x) == sorted(a)
    assert x.first() == (min(a) if a else IDSET_INVALID_ID)
    assert x.last() == (max(a) if a else IDSET_INVALID_ID)


ops = st.lists(
    st.tuples(
        st.sampled_from(["set", "clear"]),
        st.integers(0, 120),
        st.integers(0, 40),
    ),
    max_size=40,
)


@HYPO
@given(start=id_sets, ops=ops, probe=st.integers(0, 170))
def test_set_and_clear_match_python_sets(start, ops, probe):
    model = set(start)
    ids = IDset(start)
    for name, lo, span in ops:
        getattr(ids, name)(lo, lo + span)
        block = set(range(lo, lo + span + 1))
        model = model | block if name == "set" else model - block
    assert list(ids) == sorted(model)
    assert len(ids) == len(model)
    later = [i for i in model if i > probe]
    assert ids.next(probe) == (min(later) if later else IDSET_INVALID_ID)
    # the canonical form is kept: equal sets always encode alike
    assert str(ids) == str(IDset(sorted(model)))


def test_long_rank_lists():
    text = ",".join(str(i) for i in range(5000))
    ids = IDset(text)
    assert str(ids) == "0-4999" and len(ids) == 5000
    sparse = IDset(range(0, 20000, 2))
    assert IDset(str(sparse)) == sparse and len(str(sparse).split(",")) == 10000


# --- the wheel's Rv1Set / Rv1Pool / ResourceCount / TreePool call patterns ---


def test_against_rv1set_usage():
    # _idset_str(): str(IDset(",".join(str(i) for i in sorted ids)))
    ranks = [0, 1, 2, 3, 7]
    assert str(IDset(",".join(str(i) for i in ranks))) == "0-3,7"
    # _display_idset(): bracketed only when more than one id
    flags = IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS
    assert IDset(",".join(str(i) for i in ranks)).encode(flags=flags) == "[0-3,7]"
    assert IDset("3").encode(flags=flags) == "3"
    # R_lite parsing: IDset(entry["rank"]) iterated, frozenset of children
    assert [r for r in IDset("0-2")] == [0, 1, 2]
    assert frozenset(IDset("0-3")) == frozenset({0, 1, 2, 3})
    assert set(IDset("1,3")) == {1, 3}
    # ranks(): empty and non-empty forms
    assert str(IDset()) == "" and len(IDset()) == 0
    # copy_ranks()/remove_ranks(): isinstance check, then conversion
    for arg in ("1-2", 4, [5, 6], IDset("7")):
        converted = arg if isinstance(arg, IDset) else IDset(arg)
        assert set(converted) <= set(range(8))
    # set_property(): IDset(str(ranks)) and the ValueError it relies on
    assert set(IDset(str(IDset("2-3")))) == {2, 3}
    with pytest.raises(ValueError):
        IDset("2-")
    # constraint matching: rank in IDset(constraint["ranks"])
    assert 2 in IDset("0-3") and 9 not in IDset("0-3")
    # ResourceCount: first()/last() of a comma idset, scaled copies
    counts = IDset("2,4,8")
    assert (counts.first(), counts.last()) == (2, 8)
    assert str(IDset(",".join(str(v * 2) for v in counts))) == "4,8,16"
    # TreePool: str(IDset(a_set)), IDset(entry.get("ranks", "")), & with a set
    assert str(IDset({5, 3, 4})) == "3-5"
    assert frozenset(IDset("")) & {1} == frozenset()


def test_list_of_idset_strings_decodes_like_flux_python():
    # RFC 31 "ranks" constraints are arrays of idset strings; flux-python
    # decodes them sorted and comma-joined.
    assert str(IDset(["12", "0-1"])) == "0-1,12"


# --- errors and edge cases as flux-python 0.88.0's binding has them ----------


@pytest.mark.parametrize("bad", ["foo", "1-", [-1], 42.0, None])
def test_set_operations_convert_their_argument_even_on_an_empty_set(bad):
    # binding: subtract()/difference()/union()/intersect() run IDset(arg)
    # on every non-IDset argument before calling libidset, whatever self is
    error = TypeError if isinstance(bad, float) or bad is None else ValueError
    for ids in (IDset(), IDset("0-3")):
        with pytest.raises(error):
            ids - bad  # noqa: B018
        with pytest.raises(error):
            ids.subtract(bad)
        with pytest.raises(error):
            ids.difference("1", bad)
        with pytest.raises(error):
            ids.union(bad)
        with pytest.raises(error):
            ids & bad  # noqa: B018
        with pytest.raises(error):
            ids.add(bad)


def test_ids_libidset_cannot_hold():
    ids = IDset("1")
    # binding: idset_set()/idset_clear() refuse UINT_MAX - 1 and UINT_MAX
    # (valid_id()) with EINVAL -> OSError from flux.wrapper
    for bad in (IDSET_INVALID_ID, 2**32 - 1):
        for call in (ids.set, ids.clear, lambda i: ids.set(0, i)):
            with pytest.raises(OSError) as err:
                call(bad)
            assert err.value.errno == errno.EINVAL
    # binding: ids past INT_MAX cannot be set (ERANGE) but clearing them is
    # a no-op, as libidset's idset_clear() ignores ids beyond the universe
    with pytest.raises(OSError) as err:
        ids.set(2**31, 2**31 + 5)
    assert err.value.errno == errno.ERANGE
    assert ids.clear(2**31) is ids and ids.clear(0, 2**32 - 3) is ids


@pytest.mark.parametrize(
    "call",
    [
        lambda ids: ids.set(2**32),
        lambda ids: ids.set(0, 2**32),
        lambda ids: ids.clear(2**32),
        lambda ids: ids.test(2**32),
        lambda ids: 2**40 in ids,
        lambda ids: ids[2**32],
        lambda ids: ids.next(2**32),
    ],
)
def test_ids_past_unsigned_int_overflow(call):
    # binding: cffi converts the id to a C unsigned int -> OverflowError
    with pytest.raises(OverflowError):
        call(IDset("1"))


def test_argument_checks_come_before_the_c_call():
    ids = IDset("1")
    # binding: _check_index() runs on both ends before cffi sees either
    with pytest.raises(TypeError):
        ids.set(2**32, "x")
    with pytest.raises(ValueError):
        ids.set(2**32, -1)
    with pytest.raises(ValueError, match="5 > 4"):
        ids.set(5, 4)
    # binding: __setitem__ checks the value first (0/1 or a bool)
    with pytest.raises(TypeError):
        ids["x"] = 2
    ids[3] = 1.0  # 1.0 in (0, 1): accepted as True
    assert str(ids) == "1,3"


def test_next_wraps_like_an_unsigned_int():
    ids = IDset("3,5")
    # binding: idset_next() looks from id + 1 in an unsigned int, so the
    # largest unsigned int wraps round to the first id
    assert ids.next(2**32 - 1) == 3
    assert ids.next(IDSET_INVALID_ID) == IDSET_INVALID_ID
    assert IDset().next(2**32 - 1) == IDSET_INVALID_ID


@pytest.mark.parametrize(
    "text, ids",
    [
        # binding: strtoul() reads 64 bits, libidset keeps an unsigned int
        ("4294967296", [0]),
        ("4294967299", [3]),
        ("0-4294967297", [0, 1]),
        # a high-to-low range after truncation is swapped by range_set()
        ("5-4294967297", [1, 2, 3, 4, 5]),
        ("5-4294967297,3", [1, 2, 3, 4, 5]),
        # C reads the string up to its first NUL
        ("1-2\x00,junk", [1, 2]),
    ],
)
def test_decode_quirks_of_libidset(text, ids):
    assert IDset(text).expand() == ids


@pytest.mark.parametrize(
    "text", ["18446744073709551616", "4294967294", "4294967295", "0-4294967294"]
)
def test_decode_refuses_what_libidset_refuses(text):
    # binding: strtoul() overflow, or ids UINT_MAX - 1 / UINT_MAX
    with pytest.raises(ValueError, match="Invalid argument"):
        IDset(text)


def test_huge_ints_in_an_iterable_are_truncated_too():
    # binding: the ints are joined into a string for idset_decode()
    assert IDset([2**32 + 7]).expand() == [7]
    assert IDset(2**32).expand() == [0]


def test_non_ascii_strings():
    # binding: arg.encode("utf-8") fails on a lone surrogate with
    # UnicodeEncodeError, a ValueError, before libidset is called
    with pytest.raises(UnicodeEncodeError):
        IDset("1,\ud800")


@pytest.mark.parametrize("flags", [1, 8, -1, 16 | IDSET_FLAG_RANGE])
def test_flags_are_checked_only_when_encoding(flags):
    # binding: __init__/set_flags() store the flags; idset_encode() refuses
    # them (EINVAL, NULL) and ffi.string(NULL) raises RuntimeError
    ids = IDset("1-3", flags=flags)
    assert len(ids) == 3 and repr(ids) == "IDset('1-3')"
    with pytest.raises(RuntimeError):
        str(ids)
    with pytest.raises(RuntimeError):
        IDset("1-3").encode(flags)
    # binding: IDset(an_idset) copies through str(an_idset)
    with pytest.raises(RuntimeError):
        IDset(ids)


@pytest.mark.parametrize(
    "flags, error", [("x", TypeError), (1.0, TypeError), (None, TypeError)]
)
def test_flags_of_the_wrong_type(flags, error):
    # binding: cffi cannot pass the flags as a C int -> TypeError
    ids = IDset("1-3", flags=flags)
    with pytest.raises(error):
        str(ids)
    with pytest.raises(OverflowError):
        ids.encode(2**31)


def test_idset_objects_take_attributes():
    # binding: IDset is a plain Python class (a WrapperPimpl)
    ids = IDset("1")
    ids.note = "mine"
    assert ids.note == "mine"
