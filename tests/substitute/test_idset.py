"""Tests for the pure-Python ``flux.idset`` substitute (RFC 22 idsets)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mock_broker.flux_substitute import idset
from mock_broker.flux_substitute.idset import (
    IDSET_FLAG_BRACKETS,
    IDSET_FLAG_RANGE,
    IDSET_INVALID_ID,
    IDset,
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
    assert list(plain) == [1, 2, 3, 5, 6, 42]
    assert str(plain) == "1-3,5-6,42"


@pytest.mark.parametrize(
    "text", ["01", "00", "1,02", "[007]"], ids=lambda t: f"leading-zero:{t}"
)
def test_rfc22_rejects_leading_zeros(text):
    with pytest.raises(ValueError, match="invalid idset"):
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


@pytest.mark.parametrize("arg", [1.5, None, object(), True, [1, 2.0]])
def test_wrong_types_raise_type_error(arg):
    with pytest.raises(TypeError):
        IDset(arg)


def test_other_argument_kinds():
    assert IDset(5).expand() == [5]
    assert IDset([3, 1, 2]).expand() == [1, 2, 3]
    assert IDset({9, 0}).expand() == [0, 9]
    assert IDset(range(4)) == "0-3"
    original = IDset("1-4")
    clone = IDset(original)
    clone.clear(1)
    assert original == "1-4"
    with pytest.raises(ValueError):
        IDset(-1)
    with pytest.raises(ValueError, match="-2"):
        IDset([1, -2])
    # flux-python joins the ids into a string for idset_decode(), which
    # refuses repeats, so a list with a repeat is rejected here too
    with pytest.raises(ValueError, match="more than once"):
        IDset([1, 1])


def test_largest_id():
    top = 2**31 - 1
    assert IDset(str(top)).last() == top
    with pytest.raises(ValueError):
        IDset().set(top + 1)


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
    with pytest.raises(ValueError):
        ids.encode(8)
    with pytest.raises(ValueError):
        ids.set_flags(1)


# --- single ids and ranges ----------------------------------------------------


def test_set_clear_and_item_access():
    ids = IDset()
    assert ids.set(0, 3) is ids
    ids.set(10)
    ids[5] = True
    ids[3] = 0
    assert ids.expand() == [0, 1, 2, 5, 10]
    assert ids[5] and not ids[4]
    assert 10 in ids and 11 not in ids and 10**12 not in ids
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


# --- set algebra --------------------------------------------------------------


def test_set_algebra():
    a = IDset("0-5")
    assert a.union("4-8", [20]) == "0-8,20"
    assert a.intersect("3-9", IDset("0-4")) == "3-4"
    assert a.difference("1", [3, 4]) == "0,2,5"
    assert a + "6" == a | [6] == "0-6"
    assert a - "0-2" == "3-5"
    assert a & "5-7" == "5"
    assert a == "0-5"  # none of the above touched a
    b = a
    b += "10"
    b -= [0]
    assert b is a and a == "1-5,10"
    assert a.add("0").subtract(IDset("10")) is a
    assert a == "0-5"


def test_equality_and_hashing():
    assert IDset("1-3") == [1, 2, 3]
    assert IDset("1-3") == "[1-3]"
    assert IDset("1-3").equal(IDset("1,2,3"))
    assert IDset("4") == 4
    assert IDset("1") != "2"
    assert IDset("1") != "not an idset"
    assert IDset() != None  # noqa: E711
    with pytest.raises(TypeError):
        hash(IDset())


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
