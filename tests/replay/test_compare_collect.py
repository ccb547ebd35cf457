"""``flux-schedkit compare`` (schedulers in parallel processes) and
``flux-schedkit collect`` (results merged into one table)."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
from pathlib import Path

import pytest
from PIL import Image
from replay_helpers import SEED, SMALL, scheduler_module, write

import replay.compare
from flux_schedkit import cli
from replay.compare import Entry, ReplayFailed, compare
from replay.workload import prepare

SYNTAX_ERROR = str(
    Path(__file__).resolve().parents[1] / "conformance" / "inputs" / "syntax_error.py"
)


def run(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_compare_prints_one_table_and_writes_every_result(capsys, tmp_path):
    trace = write(tmp_path, SMALL)
    out_json, plot = tmp_path / "c.json", tmp_path / "c.png"
    status, out, err = run(
        capsys,
        "compare",
        trace,
        "--scheduler",
        SEED,
        "--scheduler",
        "fifo",
        "-j",
        "2",
        "--json",
        out_json,
        "--plot",
        plot,
    )
    assert status == 0, err
    lines = out.splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("scheduler "))
    assert "mean wait" in lines[head] and "BSLD" in lines[head]
    assert lines[head + 1].startswith(SEED)
    assert lines[head + 2].startswith("fifo ")
    docs = json.loads(out_json.read_text())
    assert [d["scheduler"] for d in docs] == [SEED, "fifo"]
    # Both are FIFO: the same schedule, job for job.
    starts = [[j["start"] for j in d["jobs"]] for d in docs]
    assert starts[0] == starts[1] == [100.0, 150.0, 180.0]
    with Image.open(plot) as image:
        assert image.format == "PNG"
    # A compare's replay is the replay command's, figure for figure.
    single = tmp_path / "r.json"
    assert (
        cli.main(["replay", str(trace), "--scheduler", "fifo", "--json", str(single)])
        == 0
    )
    alone = json.loads(single.read_text())
    assert alone["jobs"] == docs[1]["jobs"]
    assert alone["metrics"]["mean_wait"] == docs[1]["metrics"]["mean_wait"]


def test_progress_per_scheduler_and_a_module_that_does_not_load(tmp_path):
    source = prepare(str(write(tmp_path, SMALL)))
    seen: dict[int, list[int]] = {0: [], 1: []}
    with pytest.raises(ReplayFailed, match="broken: the scheduler did not load"):
        compare(
            [Entry("ok", SEED), Entry("broken", SYNTAX_ERROR)],
            source,
            processes=1,
            progress=[seen[0].append, seen[1].append],
        )
    assert seen[0][-1] == 3
    assert seen[1] == []


def test_a_module_that_does_not_load_is_an_input_error(capsys, tmp_path, monkeypatch):
    def failed(entries, source, **kwargs):
        raise ReplayFailed(f"{entries[0].label}: the scheduler did not load: oops")

    monkeypatch.setattr(replay.compare, "compare", failed)
    trace = write(tmp_path, SMALL)
    status, _, err = run(capsys, "compare", trace, "--scheduler", SEED)
    assert status == 2
    assert err == f"flux-schedkit compare: {SEED}: the scheduler did not load: oops\n"


def test_compare_input_errors_exit_2_before_any_replay(capsys, tmp_path):
    status, out, err = run(
        capsys, "compare", tmp_path / "none.swf", "--scheduler", "fifo"
    )
    assert (status, out) == (2, "")
    assert "none.swf" in err
    status, _, err = run(
        capsys, "compare", write(tmp_path, SMALL), "--scheduler", "/no/such.py"
    )
    assert status == 2 and "no such scheduler module file" in err


def test_compare_exits_1_and_names_the_scheduler_that_left_jobs(capsys, tmp_path):
    idle = scheduler_module(tmp_path, "idle", "pass  # never allocates")
    status, _, err = run(
        capsys,
        "compare",
        write(tmp_path, SMALL),
        "--scheduler",
        SEED,
        "--scheduler",
        idle,
    )
    assert status == 1
    assert f"{idle}: 3 jobs never started" in err


def test_an_interrupted_compare_ends_its_workers(tmp_path, monkeypatch):
    source = prepare(str(write(tmp_path, SMALL)))
    calls = []

    def interrupted(pending, **kwargs):
        calls.append(pending)
        raise KeyboardInterrupt

    monkeypatch.setattr(replay.compare, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare([Entry("a", SEED), Entry("b", SEED)], source, processes=2)
    assert calls
    assert multiprocessing.active_children() == []


# -- collect ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two replay results of two traces, and a compare result of one."""
    tmp_path = tmp_path_factory.mktemp("results")
    small = write(tmp_path, SMALL, "small.swf")
    other = write(tmp_path, SMALL.replace("    2   110", "    2   160"), "other.swf")
    folder = tmp_path / "results"
    folder.mkdir()
    for name, trace in (("small", small), ("other", other)):
        argv = ["replay", str(trace), "--scheduler", "fifo"]
        assert cli.main([*argv, "--json", str(folder / f"{name}.json")]) == 0
    assert (
        cli.main(
            [
                "compare",
                str(small),
                "--scheduler",
                "easy",
                "--scheduler",
                "conservative",
            ]
            + ["--args", "queue-depth=4", "-j", "1", "--json", str(tmp_path / "c.json")]
        )
        == 0
    )
    return folder, tmp_path / "c.json"


def test_collect_merges_results_into_one_sorted_table(capsys, tmp_path, results):
    folder, compared = results
    capsys.readouterr()
    out_csv, out_json = tmp_path / "all.csv", tmp_path / "all.json"
    status, out, err = run(
        capsys, "collect", folder, compared, "--csv", out_csv, "--json", out_json
    )
    assert status == 0, err
    rows = [line.split()[:2] for line in out.splitlines()[1:5]]
    assert rows == [
        ["other.swf", "fifo"],
        ["small.swf", "conservative"],
        ["small.swf", "easy"],
        ["small.swf", "fifo"],
    ]
    assert "queue-depth=4" in out.splitlines()[2]
    table = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [(r["trace"], r["scheduler"], r["args"]) for r in table][1] == (
        "small.swf",
        "conservative",
        "queue-depth=4",
    )
    assert float(table[3]["mean_wait"]) == 30.0
    merged = json.loads(out_json.read_text())
    assert merged[3]["metrics"]["mean_wait"] == 30.0
    assert merged[3]["file"].endswith("small.json")


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "not a JSON file"),
        ('{"format": "other"}', "not a replay result (format is 'other'"),
        ("[1, 2]", "not a replay result (expected a JSON object)"),
    ],
)
def test_collect_rejects_what_is_not_a_result(
    capsys, tmp_path, results, content, message
):
    folder, _ = results
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    out_csv = tmp_path / "all.csv"
    status, out, err = run(capsys, "collect", folder, bad, "--csv", out_csv)
    assert (status, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out_csv.exists()


def test_collect_of_an_empty_folder_is_an_error(capsys, tmp_path):
    status, _, err = run(capsys, "collect", tmp_path)
    assert status == 2
    assert "no .json files" in err


def test_compare_and_collect_never_write_over_what_they_read(capsys, tmp_path):
    trace = write(tmp_path, SMALL, "t.swf")
    original = trace.read_bytes()
    both = ["--scheduler", SEED, "--scheduler", SEED]
    status, out, err = run(capsys, "compare", trace, *both, "--plot", trace)
    assert status == 2 and out == ""
    assert err.strip().endswith("t.swf: is what this command reads; not overwritten")
    assert trace.read_bytes() == original
    result = tmp_path / "r.json"
    status, _, _ = run(capsys, "replay", trace, "--scheduler", SEED, "--json", result)
    assert status == 0
    kept = result.read_bytes()
    status, out, err = run(capsys, "collect", result, "--json", result)
    assert status == 2 and out == ""
    assert err.strip().endswith("r.json: is what this command reads; not overwritten")
    assert result.read_bytes() == kept
