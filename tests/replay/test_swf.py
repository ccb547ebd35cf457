"""Reading SWF traces: header, records, selection and every way a file
can be broken."""

from __future__ import annotations

import gzip

import pytest
from replay_helpers import SMALL, swf_line, write

from replay.swf import SWFError, Window, read_swf


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz"])
def test_header_jobs_and_fallbacks(tmp_path, name):
    trace = read_swf(write(tmp_path, SMALL, name))
    assert (trace.max_nodes, trace.max_procs) == (4, 4)
    assert trace.unix_start_time == 1000000
    assert trace.header["Note"] == "a hand-made trace"
    # A continuation line of a multi-line value is not a header field.
    assert trace.header["Information"] == "http://example.org/"
    assert "http" not in trace.header
    assert [j.job_id for j in trace.jobs] == [1, 2, 4]
    assert (trace.records, trace.unusable) == (4, 1)
    # Job 4: allocated size for the unknown request, 0.0 for the unknown
    # requested time.
    assert (trace.jobs[2].procs, trace.jobs[2].requested_time) == (3, 0.0)
    assert (trace.jobs[0].submit, trace.jobs[0].run, trace.jobs[0].user) == (
        100.0,
        50.0,
        7,
    )


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    path = tmp_path / "trace.swf"
    with gzip.open(path, "wt") as fh:
        fh.write(SMALL)
    assert [j.job_id for j in read_swf(path).jobs] == [1, 2, 4]


def test_header_values_that_are_not_numbers_are_ignored(tmp_path):
    trace = read_swf(write(tmp_path, "; MaxProcs: many\n; MaxNodes: -1\n"))
    assert (trace.max_procs, trace.max_nodes, trace.unix_start_time) == (
        None,
        None,
        None,
    )


def test_limit_and_skip_count_usable_jobs(tmp_path):
    path = write(tmp_path, SMALL)
    assert [j.job_id for j in read_swf(path, limit=2).jobs] == [1, 2]
    trace = read_swf(path, skip=1, limit=1)
    assert [j.job_id for j in trace.jobs] == [2]
    assert trace.passed_over == 1


def test_limit_stops_reading(tmp_path):
    # The line after the limit is malformed: it is never read.
    path = write(tmp_path, SMALL.replace("    4   130", "    4   x"))
    assert read_swf(path, limit=2).records == 2


def test_window_selects_by_submit_time_before_skip(tmp_path):
    path = write(tmp_path, SMALL)
    trace = read_swf(path, window=Window(105, 131))
    assert [j.job_id for j in trace.jobs] == [2, 4]
    assert trace.outside_window == 1
    trace = read_swf(path, skip=1, window=Window(105, None))
    assert [j.job_id for j in trace.jobs] == [4]
    assert [j.job_id for j in read_swf(path, window=Window(None, 110)).jobs] == [1]
    assert str(Window(105, None)) == "105:"


@pytest.mark.parametrize(
    "line, why",
    [
        ("5 140 0 20 1\n", "5 fields, an SWF record has 18"),
        (swf_line(5, 140, 20, 1, 30).replace("\n", " 7\n"), "19 fields"),
        (swf_line(5, 140, "zz", 1, 30), "field 4 is 'zz', not a number"),
        (swf_line(5, "nan", 20, 1, 30), "field 2 is 'nan', not a finite number"),
    ],
)
def test_a_malformed_line_names_file_and_line(tmp_path, line, why):
    path = write(tmp_path, SMALL + line)
    with pytest.raises(SWFError, match=rf"t\.swf:12: {why}"):
        read_swf(path)


def test_skip_malformed_counts_the_lines(tmp_path):
    text = SMALL + "5 140 0 20 1\n" + swf_line(6, 150, 20, 1, 30) + "garbage\n"
    trace = read_swf(write(tmp_path, text), skip_malformed=True)
    assert [j.job_id for j in trace.jobs] == [1, 2, 4, 6]
    assert (trace.malformed, trace.malformed_lines) == (2, [12, 14])


def test_a_truncated_gzip_file_is_an_swf_error(tmp_path):
    path = write(tmp_path, SMALL * 50, "t.swf.gz")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SWFError, match=r"t\.swf\.gz: the gzip file is truncated"):
        read_swf(path)


def test_a_corrupt_gzip_file_is_an_swf_error(tmp_path):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    with pytest.raises(SWFError, match=r"t\.swf\.gz: the gzip file is corrupt"):
        read_swf(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_swf(tmp_path / "none.swf")
    with pytest.raises(SWFError, match="is a directory"):
        read_swf(tmp_path)


def test_empty_and_header_only_traces_have_no_jobs(tmp_path):
    assert read_swf(write(tmp_path, "")).records == 0
    trace = read_swf(write(tmp_path, "; MaxProcs: 4\n\n"))
    assert (trace.records, trace.jobs, trace.header) == (0, [], {"MaxProcs": "4"})
