"""Tests for the pure-Python ``flux.hostlist`` substitute (RFC 29 hostlists)."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mock_broker.flux_substitute import hostlist
from mock_broker.flux_substitute._binding import InvalidArguments
from mock_broker.flux_substitute.hostlist import Hostlist, HostlistIterator

HYPO = settings(derandomize=True, deadline=None, max_examples=200, database=None)


# --- RFC 29 -------------------------------------------------------------------

# RFC 29's test vectors: each hostlist string on the left expands to the
# plain comma list on the right.
RFC29_VECTORS = [
    ("", ""),
    ("foox,fooy,fooz", "foox,fooy,fooz"),
    ("[1-3,5-6]", "1,2,3,5,6"),
    ("foo[1-5]", "foo1,foo2,foo3,foo4,foo5"),
    ("foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2"),
    ("foo1,foo1,foo1", "foo1,foo1,foo1"),
    ("[00-02]", "00,01,02"),
    ("[00-2]", "00,01,02"),
    ("foo[1,1,2,1]", "foo1,foo1,foo2,foo1"),
]


@pytest.mark.parametrize("text, plain", RFC29_VECTORS)
def test_rfc29_vectors(text, plain):
    expected = plain.split(",") if plain else []
    assert Hostlist(text).expand() == expected
    assert list(hostlist.decode(text)) == expected


def test_rfc29_is_an_ordered_list_with_repeats():
    # RFC 29: a hostlist represents an ordered list of strings
    hl = Hostlist("b2,a1,b2,a0")
    assert hl.expand() == ["b2", "a1", "b2", "a0"]
    assert str(hl) == "b2,a1,b2,a0"


def test_padding_is_set_per_element_by_its_first_number():
    # RFC 29's prose says the first element's zero padding carries over to
    # the whole idlist; libhostlist (which flux-python wraps) pads each
    # comma element by its own low number instead, and we follow libhostlist.
    assert Hostlist("n[005,4,11-13]").expand() == ["n005", "n4", "n11", "n12", "n13"]
    assert Hostlist("n[1-010]").expand() == [f"n{i}" for i in range(1, 11)]
    assert Hostlist("n[098-100]").expand() == ["n098", "n099", "n100"]


# --- encoding, as libhostlist does it ----------------------------------------


@pytest.mark.parametrize(
    "text, encoded, count",
    [
        ("foo-1a-2,foo-1a-3", "foo-1a-[2-3]", 2),
        ("foo1,foo2,foo3,fooi", "foo[1-3],fooi", 4),
        ("foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]", 4),
        ("fooi,foo1,foo2,foo3,foo5,foo7,foo8", "fooi,foo[1-3,5,7-8]", 7),
        ("1,2,3,4,5,9", "[1-5,9]", 6),
        (",1,2,3,4,5,9,", "[1-5,9]", 6),
        ("14636", "14636", 1),
        ("a1,b[1-2]", "a1,b[1-2]", 3),
        ("node[0-3,7]", "node[0-3,7]", 5),
        ("foo12,foo[4,1-2]", "foo[12,4,1-2]", 4),
        # a suffix after the brackets is expanded and never re-bracketed
        ("foo[1,3]-bar", "foo1-bar,foo3-bar", 2),
        ("foo[1-3]-ib", "foo1-ib,foo2-ib,foo3-ib", 3),
        ("[00-03]p", "00p,01p,02p,03p", 4),
        # separators: commas, blanks and tabs, repeated or not
        ("a1 a2\ta3,,a4", "a[1-4]", 4),
    ],
)
def test_encode(text, encoded, count):
    hl = Hostlist(text)
    assert str(hl) == hl.encode() == encoded
    assert len(hl) == hl.count() == count
    assert Hostlist(encoded).expand() == hl.expand()


@pytest.mark.parametrize(
    "hosts, encoded",
    [
        (["n001", "n002", "n003", "n010"], "n[001-003,010]"),
        (["n08", "n09", "n10"], "n[08-10]"),  # "10" needs no padding at width 2
        (["n8", "n9", "n10"], "n[8-10]"),
        (["n9", "n010"], "n[9,010]"),  # widths differ: no shared range
        (["n1", "n01"], "n[1,01]"),
        (["n0", "n00", "n000"], "n[0,00,000]"),
        (["n98", "n99", "n100"], "n[98-100]"),
        (["n098", "n099", "n100"], "n[098-100]"),
    ],
)
def test_zero_padding_is_kept(hosts, encoded):
    hl = Hostlist(hosts)
    assert str(hl) == encoded
    assert Hostlist(encoded).expand() == hosts


def test_prefix_given_in_brackets_is_kept():
    # libhostlist remembers where a bracket expression put its numbers
    assert str(Hostlist("f00[7-8]")) == "f00[7-8]"
    assert str(Hostlist("f007,f008")) == "f[007-008]"
    assert Hostlist("f00[7-8]").expand() == Hostlist("f007,f008").expand()


# --- errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, culprit",
    [
        ("node[1-", "node[1-"),
        ("node[3-1]", "3-1"),
        ("node[a]", "a"),
        ("n[1-2", "n[1-2"),
        ("[]", "[]"),
        ("foo[]", "foo[]"),
        ("foo[[1,3]", "foo[[1,3]"),
        ("foo]", "foo]"),
        ("a,foo],b", "foo]"),
        ("foo[x-y]", "x-y"),
        ("foo[0-1,2--5]", "2--5"),
        ("foo[1,,2]", "foo[1,,2]"),
        ("foo[ ]", "foo[ ]"),
        ("foo[1-2 ]", "1-2 "),
        ("foo[1x]", "1x"),
        ("foo[0-1048576]", "0-1048576"),  # libhostlist's range size limit
    ],
)
def test_malformed_strings_name_the_offending_text(text, culprit):
    # binding: hostlist_decode() returns NULL -> ValueError("Invalid hostlist")
    with pytest.raises(ValueError, match="Invalid hostlist") as err:
        Hostlist(text)
    assert culprit in str(err.value)


@pytest.mark.parametrize("arg", [5, None, 1.5, ["a", 3], [b"x"]])
def test_wrong_types_raise_type_error(arg):
    with pytest.raises(TypeError):
        Hostlist(arg)


# --- list behaviour -----------------------------------------------------------


def test_indexing_and_slicing():
    hl = Hostlist("foo[0-9]")
    assert hl[0] == "foo0" and hl[9] == "foo9" and hl[-1] == "foo9"
    assert isinstance(hl[8:], Hostlist) and str(hl[8:]) == "foo[8-9]"
    assert str(hl[1:3]) == "foo[1-2]"
    assert str(hl[::3]) == "foo[0,3,6,9]"
    assert str(hl[1, 3]) == "foo[1,3]"
    assert str(hl[[-1, 0]]) == "foo[9,0]"
    with pytest.raises(IndexError):
        hl[10]
    with pytest.raises(IndexError):
        hl[-11]
    with pytest.raises(TypeError):
        hl["foo1"]
    with pytest.raises(TypeError):
        hl[[0, "x"]]


def test_find_contains_and_index():
    hl = Hostlist("tst,tst0,n[1-4],tst")
    assert hl.find("tst") == 0 and hl.find("n3") == 4
    assert "n4" in hl and "n5" not in hl
    with pytest.raises(FileNotFoundError):
        hl.find("n5")
    assert hl.index("n[4,1],tst") == [5, 2, 0]
    assert hl.index(Hostlist("n9,n1"), ignore_nomatch=True) == [2]
    assert hl.index(["n2", "tst0"]) == [3, 1]
    with pytest.raises(FileNotFoundError, match=r"n\[8-9\]"):
        hl.index("n[1,8-9]")


def test_append_delete_copy():
    hl = Hostlist()
    assert hl.append("") == 0
    assert hl.append("foo12", "foo[4,1-2]") == 4
    assert hl.append(Hostlist("bar[26-30]"), ["x", "y"]) == 7
    assert str(hl) == "foo[12,4,1-2],bar[26-30],x,y"
    clone = hl.copy()
    assert hl.delete("foo[1-2],x,nothere") == 3
    assert str(hl) == "foo[12,4],bar[26-30],y"
    assert len(clone) == 11
    dup = Hostlist("a,b,a,a")
    assert dup.delete("a,a") == 2 and str(dup) == "b,a"
    assert repr(Hostlist("n[1-2]")) == "Hostlist('n[1-2]')"


@pytest.mark.parametrize(
    "text, after_sort, after_uniq",
    [
        ("foo,f,bar,baz", "bar,baz,f,foo", "bar,baz,f,foo"),
        ("[5-6],[3-4],[1-2,0]", "[0-6]", "[0-6]"),
        ("[0-20],12,15", "[0-12,12-15,15-20]", "[0-20]"),
        ("[0-20],45,12,015", "[0-12,12-20,45,015]", "[0-20,45,015]"),
        ("bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo,foo1", "bar[1-2],foo,foo1"),
        ("foo[0-3],foo[0-3]", "foo[0,0-1,1-2,2-3,3]", "foo[0-3]"),
        ("n10,n9,n100", "n[9-10,100]", "n[9-10,100]"),
    ],
)
def test_sort_and_uniq(text, after_sort, after_uniq):
    hl = Hostlist(text)
    assert hl.sort() is hl and str(hl) == after_sort
    assert str(Hostlist(text).uniq()) == after_uniq


# --- properties ---------------------------------------------------------------

prefixes = st.sampled_from(["", "n", "node", "rack1-n", "f00", "x-"])
numbered = st.builds(
    lambda p, n, pad: f"{p}{n:0{pad}d}",
    prefixes,
    st.integers(0, 130),
    st.integers(0, 4),
)
plain_names = st.sampled_from(["login", "foo", "n", "a-b", "gpu"])
host_lists = st.lists(st.one_of(numbered, numbered, plain_names), max_size=40)


@HYPO
@given(hosts=host_lists)
def test_expand_compress_expand_is_identity(hosts):
    hl = Hostlist(hosts)
    assert hl.expand() == hosts
    encoded = str(hl)
    assert Hostlist(encoded).expand() == hosts
    assert str(Hostlist(encoded)) == encoded


@HYPO
@given(hosts=host_lists)
def test_compressed_form_is_short(hosts):
    encoded = str(Hostlist(hosts))
    plain = ",".join(hosts)
    # Compression never lengthens a list except for the brackets themselves:
    # "1,2" becomes "[1-2]" and "a1,a3" becomes "a[1,3]" in libhostlist too.
    assert len(encoded) <= len(plain) + 2 * encoded.count("[")


node_names = st.builds(
    lambda n, pad: f"node{n:0{pad}d}", st.integers(0, 300), st.integers(0, 3)
)


@HYPO
@given(hosts=st.lists(node_names, max_size=40))
def test_compression_never_lengthens_a_shared_prefix_list(hosts):
    # with one prefix of two or more characters the brackets always pay off
    assert len(str(Hostlist(hosts))) <= len(",".join(hosts))


@HYPO
@given(hosts=host_lists, doomed=host_lists)
def test_delete_matches_list_remove(hosts, doomed):
    model = list(hosts)
    removed = 0
    for name in doomed:
        if name in model:
            model.remove(name)
            removed += 1
    hl = Hostlist(hosts)
    assert hl.delete(Hostlist(doomed)) == removed
    assert hl.expand() == model


@HYPO
@given(hosts=host_lists)
def test_sort_and_uniq_are_permutations(hosts):
    ordered = Hostlist(hosts).sort().expand()
    assert sorted(ordered) == sorted(hosts)
    assert Hostlist(ordered).sort().expand() == ordered
    unique = Hostlist(hosts).uniq().expand()
    assert sorted(unique) == sorted(set(hosts))
    assert unique == list(dict.fromkeys(ordered))


# --- the wheel's Rv1Set / ResourceSet call patterns ---------------------------


def test_against_rv1set_usage():
    # R parsing: expanded_nodelist.extend(Hostlist(entry)) for each entry
    expanded: list[str] = []
    for entry in ["node[0-1]", "login3", "gpu[07-08]"]:
        expanded.extend(Hostlist(entry))
    assert expanded == ["node0", "node1", "login3", "gpu07", "gpu08"]
    # nodelist(): Hostlist(",".join(hosts)) if hosts else Hostlist("")
    hosts = [f"node{i}" for i in range(4)] + ["node7"]
    assert str(Hostlist(",".join(hosts))) == "node[0-3,7]"
    assert str(Hostlist("")) == "" and len(Hostlist("")) == 0
    # R serialisation: [str(Hostlist(",".join(hostnames)))]
    assert [str(Hostlist(",".join(["a1", "a2", "b"])))] == ["a[1-2],b"]
    # constraint matching: info["hostname"] in Hostlist(constraint["hostlist"])
    assert "node2" in Hostlist("node[0-3]") and "node9" not in Hostlist("node[0-3]")
    # ResourceSet.host_ranks(): isinstance check, then nodelist.index()
    nodelist = Hostlist(",".join(hosts))
    arg = "node[7,0]"
    wanted = arg if isinstance(arg, Hostlist) else Hostlist(arg)
    assert nodelist.index(wanted, ignore_nomatch=False) == [4, 0]


# --- flux-python 0.88.0's libhostlist, quirks and errors included -----------


@pytest.mark.parametrize(
    "text, names",
    [
        # binding: parse_next_range() checks only that the high number
        # fills its text, so "1-" is "1" and junk before a "-" is ignored
        ("foo[1-]", ["foo1"]),
        ("n[1x-3]", ["n01", "n02", "n03"]),
        # strtoul() skips blanks and takes a sign; the width is the text's
        ("foo[1, 2]", ["foo1", "foo02"]),
        ("n[+1]", ["n01"]),
        ("n[\t7-8]", ["n07", "n08"]),
        # only the first bracket list is expanded; the rest is a suffix
        ("foo[1]-[2]", ["foo1-[2]"]),
        ("a[1-2]b[3]", ["a1b[3]", "a2b[3]"]),
        # next_tok() counts brackets: a stray "]" keeps the next separator
        ("a]b[1]", ["a]b1"]),
        ("a]b,c[1]", ["a]b,c1"]),
        # a bracket number past 64 bits saturates (strtoul), while a plain
        # host whose suffix overflows is dropped (hostname_create fails)
        ("n[99999999999999999999]", ["n18446744073709551615"]),
        ("n99999999999999999999,n1", ["n1"]),
        # C reads the string up to its first NUL
        ("n1,n2\x00,n3", ["n1", "n2"]),
    ],
)
def test_libhostlist_decoding_leniency(text, names):
    assert Hostlist(text).expand() == names


def test_bracket_element_limit():
    # binding: parse_range_list() takes at most MAX_RANGES (10240) elements
    def hosts(n):
        return "n[" + ",".join(str(2 * i) for i in range(n)) + "]"

    assert len(Hostlist(hosts(10240))) == 10240
    with pytest.raises(ValueError, match="Invalid hostlist"):
        Hostlist(hosts(10241))


def test_unencodable_text():
    # binding: arg.encode("utf-8") -> UnicodeEncodeError (a ValueError)
    with pytest.raises(UnicodeEncodeError):
        Hostlist("n1,\ud800")
    with pytest.raises(UnicodeEncodeError):
        Hostlist(["n1", "\ud800"])


@pytest.mark.parametrize("name", [None, "n1,n2", "n[1-2]", "a b", "x\ty", "]"])
def test_find_refuses_what_hostname_create_refuses(name):
    # binding: hostlist_find() fails with EINVAL for NULL or a name holding
    # ",[]\t " -> OSError, which __contains__ does not catch
    hl = Hostlist("n[1-2]")
    for call in (hl.find, hl.__contains__):
        with pytest.raises(OSError) as err:
            call(name)
        assert err.value.errno == errno.EINVAL
        assert not isinstance(err.value, FileNotFoundError)


@pytest.mark.parametrize("name", [3, 1.5, Hostlist("n1"), ["n1"], object()])
def test_find_with_a_non_string(name):
    # binding: cffi cannot pass it as char * (TypeError), which
    # flux.wrapper re-raises as InvalidArguments, a ValueError
    hl = Hostlist("n[1-2]")
    with pytest.raises(InvalidArguments):
        name in hl  # noqa: B015
    with pytest.raises(ValueError):
        hl.find(name)


def test_find_takes_bytes_and_stops_at_nul():
    # binding: bytes pass to char * as they are; C stops at the first NUL
    hl = Hostlist("n[1-2]")
    assert hl.find(b"n2") == 1 and b"n1" in hl
    assert hl.find("n2\x00junk") == 1
    # binding: not found is ENOENT -> FileNotFoundError -> False for "in"
    assert "" not in hl and "n3" not in hl
    with pytest.raises(FileNotFoundError) as err:
        hl.find("n3")
    assert err.value.errno == errno.ENOENT


def test_delete_decodes_str_of_its_argument():
    # binding: delete() passes str(hosts) to hostlist_delete()
    hl = Hostlist("5,n[1-3],None")
    assert hl.delete(5) == 1 and hl.delete(None) == 1
    assert hl.delete(Hostlist("n[1-2]")) == 2
    assert str(hl) == "n3"
    # str(["n3"]) is "['n3']", which does not decode: EINVAL -> OSError
    with pytest.raises(OSError) as err:
        hl.delete(["n3"])
    assert err.value.errno == errno.EINVAL
    with pytest.raises(OSError) as err:
        hl.delete("n[3")
    assert err.value.errno == errno.EINVAL
    # a range past libhostlist's size limit fails with ERANGE
    with pytest.raises(OSError) as err:
        hl.delete("n[0-1048576]")
    assert err.value.errno == errno.ERANGE
    assert str(hl) == "n3"


def test_delete_counts_names_it_cannot_look_up_as_minus_one():
    # binding: hostlist_delete_host() returns -1 for a name holding a
    # bracket (hostname_stack_create fails) and hostlist_delete() adds it up
    hl = Hostlist("a1,n1")
    assert hl.delete("a[1]b[2]") == -1
    assert hl.delete("a[1]b[2],n1") == 0
    assert str(hl) == "a1"


def test_index_error_carries_only_a_message():
    # binding: index() raises FileNotFoundError(message), without errno
    with pytest.raises(FileNotFoundError, match="host 'n9' not found") as err:
        Hostlist("n1").index("n9")
    assert err.value.errno is None


def test_new_hostlists_decode_each_name_again():
    # binding: slices, index lists and Hostlist(hostlist) append the names
    # one by one, so each name is decoded on its own
    hl = Hostlist("f00[1-3]")
    assert str(hl) == "f00[1-3]"
    assert str(hl.copy()) == "f00[1-3]"  # hostlist_copy() keeps the ranges
    assert str(hl[0:2]) == "f[001-002]"
    assert str(hl[[2, 0]]) == "f[003,001]"
    assert str(Hostlist(hl)) == "f[001-003]"
    odd = Hostlist("a[1]b[2]")
    assert odd.expand() == ["a1b[2]"] and Hostlist(odd).expand() == ["a1b2"]


def test_index_by_iterable():
    hl = Hostlist("n[0-3]")
    # binding: any iterable of ints works, and "" is an empty iterable
    assert str(hl[""]) == "" and str(hl[range(1, 3)]) == "n[1-2]"
    with pytest.raises(TypeError):
        hl["n1"]
    with pytest.raises(IndexError):
        hl[[0, 4]]


def test_long_names():
    # binding: hostlist_nth() prints into a 271-byte buffer; a name or
    # prefix that does not fit gives NULL, on which flux-python calls
    # .decode() (AttributeError); a number that does not fit is cut short
    long_plain = Hostlist("x" * 271)
    assert len(long_plain) == 1 and str(long_plain) == "x" * 271
    with pytest.raises(AttributeError):
        long_plain[0]
    with pytest.raises(AttributeError):
        list(long_plain)
    assert Hostlist("x" * 270)[0] == "x" * 270
    assert Hostlist("y" * 265 + "[1234567-1234568]")[1] == "y" * 265 + "12345"


def test_iteration_reads_the_live_list_by_position():
    # binding: HostlistIterator indexes the live list with a counter
    hl = Hostlist("a,b,c,d")
    assert isinstance(iter(hl), HostlistIterator)
    seen = []
    for name in hl:
        seen.append(name)
        if name == "a":
            hl.delete("b")
        if name == "d":
            hl.append("e")
    assert seen == ["a", "c", "d", "e"]


def test_hostlist_objects_take_attributes():
    hl = Hostlist("n1")
    hl.note = "mine"
    assert hl.note == "mine"
