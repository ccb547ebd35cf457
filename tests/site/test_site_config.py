"""``flux-schedkit site-config``: the modprobe entries and module files a
site installs, without a real Flux (the real broker is in test_real_flux)."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest

from flux_schedkit import cli, site_files
from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

ROOT = Path(__file__).resolve().parents[2]
NAMES = {p: f"schedkit-{p}" for p in REFERENCE_SCHEDULERS}


def _entries(folder: Path) -> dict[str, dict]:
    with open(folder / "modprobe.d" / "schedkit.toml", "rb") as fp:
        return {e["name"]: e for e in tomllib.load(fp)["modules"]}


def test_install_writes_one_entry_and_module_file_per_scheduler(tmp_path, capsys):
    assert cli.main(["site-config", str(tmp_path)]) == 0
    entries = _entries(tmp_path)
    assert sorted(entries) == sorted(NAMES.values())
    for entry in entries.values():
        # both services, or modprobe loads sched-simple for feasibility too
        assert entry["provides"] == ["sched", "feasibility"]
        assert set(entry["requires"]) == {"job-manager", "resource"}
        assert entry["ranks"] == "0"
        assert entry["priority"] < 40  # below flux-core's own schedulers
        assert "args" not in entry
        module = Path(entry["module"])
        assert module.is_absolute() and module.is_file()
        assert module == tmp_path.resolve() / "modules" / f"{entry['name']}.py"
    out = capsys.readouterr().out
    assert out.count("wrote ") == 4
    assert 'sched = "schedkit-fifo"' in out


def test_arguments_and_priorities_go_to_their_entries(tmp_path):
    status = cli.main(
        [
            "site-config",
            str(tmp_path),
            "--scheduler=easy",
            "--scheduler=conservative",
            "--args",
            "conservative=queue-depth=64 reservation-depth=8",
            "--priority=easy=60",
        ]
    )
    assert status == 0
    entries = _entries(tmp_path)
    assert sorted(entries) == ["schedkit-conservative", "schedkit-easy"]
    assert entries["schedkit-easy"]["priority"] == 60
    assert "args" not in entries["schedkit-easy"]
    assert entries["schedkit-conservative"]["args"] == [
        "queue-depth=64",
        "reservation-depth=8",
    ]
    assert not (tmp_path / "modules" / "schedkit-fifo.py").exists()


def test_print_shows_the_entries_and_writes_nothing(tmp_path, capsys):
    assert cli.main(["site-config", str(tmp_path), "--print"]) == 0
    text = capsys.readouterr().out
    parsed = tomllib.loads(text)
    assert [e["name"] for e in parsed["modules"]] == list(NAMES.values())
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--args", "easy=queue-depth=bogus"], "queue-depth='bogus' is invalid"),
        (["--args", "easy=log_level=debug"], "unknown argument 'log_level=debug'"),
        (["--args", "fifo=reservation-depth=4"], "unknown argument"),
        (["--args", "easy"], "expected NAME=VALUE"),
        (["--args", 'easy="unclosed'], "No closing quotation"),
        (["--priority", "easy=high"], "'high' is not an integer"),
        (["--priority", "backfill=60"], "unknown scheduler 'backfill'"),
        (["--scheduler", "sched-backfill"], "unknown scheduler 'sched-backfill'"),
        (["--scheduler", "easy", "--priority", "fifo=60"], "not installed here"),
        (["--remove", "--print"], "do not go together"),
    ],
)
def test_bad_input_is_a_usage_error_that_writes_nothing(
    tmp_path, capsys, argv, message
):
    assert cli.main(["site-config", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_no_folder_and_no_flux_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli.main(["site-config"]) == 2
    assert "no DIR given and no flux on PATH" in capsys.readouterr().err


def test_a_file_it_did_not_write_is_kept_unless_forced(tmp_path, capsys):
    mine = tmp_path / "modprobe.d" / "schedkit.toml"
    mine.parent.mkdir()
    mine.write_text("# the site's own file\n")
    assert cli.main(["site-config", str(tmp_path)]) == 1
    assert "not written by flux-schedkit site-config" in capsys.readouterr().err
    assert mine.read_text() == "# the site's own file\n"
    assert not (tmp_path / "modules").exists()
    assert cli.main(["site-config", str(tmp_path), "--force"]) == 0
    assert "schedkit-easy" in _entries(tmp_path)


def test_running_again_replaces_and_remove_takes_only_its_files(tmp_path, capsys):
    assert cli.main(["site-config", str(tmp_path)]) == 0
    assert cli.main(["site-config", str(tmp_path), "--priority=fifo=70"]) == 0
    assert _entries(tmp_path)["schedkit-fifo"]["priority"] == 70
    other = tmp_path / "modprobe.d" / "site.toml"
    other.write_text("# another entry\n")
    capsys.readouterr()
    assert cli.main(["site-config", str(tmp_path), "--remove"]) == 0
    assert capsys.readouterr().out.count("removed ") == 4
    assert other.exists()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["site.toml"]


def test_an_unwritable_folder_fails_with_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["site-config", str(blocker)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    # The path it could not use, then why, as the other commands say it.
    assert err == f"flux-schedkit site-config: {blocker}/modules: Not a directory\n"


@pytest.mark.parametrize("policy", list(REFERENCE_SCHEDULERS))
def test_installed_module_file_runs_the_reference_scheduler(tmp_path, policy):
    # The broker loads the written file, not the reference file itself.
    [loader, _] = site_files.site_files(tmp_path, [policy])
    site_files.install([loader])
    broker = MockBroker(Machine.uniform(2, 4))
    try:
        link = broker.load(str(loader.path), ["queue-depth=unlimited"])
        assert link.name == NAMES[policy]
        job = broker.jobs.submit(
            make_jobspec(nodes=1, slots=1, cores=4, duration=10), runtime=5
        )
        broker.run()
        assert broker.jobs.job(job).result == "completed"
        assert broker.stats()["jobs_started"] == 1
    finally:
        broker.close()


def test_module_file_names_the_folders_of_every_runtime_package(tmp_path):
    [loader, _] = site_files.site_files(tmp_path, ["easy"])
    namespace: dict = {}
    tree = ast.parse(loader.text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id in (
            "ROOTS",
            "MODULE_FILE",
        ):
            namespace[node.targets[0].id] = ast.literal_eval(node.value)
    assert namespace["MODULE_FILE"] == str(reference_path("easy"))
    for package in site_files.RUNTIME_PACKAGES:
        module = sys.modules.get(package) or __import__(package)
        folder = Path(module.__file__).resolve().parent
        root = folder.parent if Path(module.__file__).name == "__init__.py" else folder
        assert str(root) in namespace["ROOTS"]


def _top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_scheduler_modules_import_nothing_the_module_file_does_not_provide():
    # What the broker's Python sees: its standard library, its own flux
    # bindings, and the folders of RUNTIME_PACKAGES.
    files = list((ROOT / "lib" / "flux_sched_base").glob("*.py"))
    files += [reference_path(p) for p in REFERENCE_SCHEDULERS]
    allowed = set(sys.stdlib_module_names) | {"flux", "_flux", "__future__"}
    allowed |= set(site_files.RUNTIME_PACKAGES)
    for path in files:
        extra = _top_level_imports(path) - allowed
        assert not extra, f"{path.name} imports {sorted(extra)}"


def _fake_flux(tmp_path: Path, script: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    flux = bin_dir / "flux"
    flux.write_text("#!/bin/sh\n" + script)
    flux.chmod(0o755)
    return str(bin_dir)


def test_without_folder_it_uses_the_modprobe_folder_of_the_flux_on_path(
    tmp_path, monkeypatch, capsys
):
    confdir = tmp_path / "etc" / "flux"
    script = (
        f'[ "$*" = "config builtin confdir" ] && echo {confdir} && exit 0\nexit 1\n'
    )
    monkeypatch.setenv("PATH", _fake_flux(tmp_path, script))
    assert cli.main(["site-config", "--print"]) == 0
    modules = [e["module"] for e in tomllib.loads(capsys.readouterr().out)["modules"]]
    assert all(m.startswith(f"{confdir}/modprobe/modules/") for m in modules)


def test_a_flux_that_cannot_name_its_confdir_is_a_usage_error(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PATH", _fake_flux(tmp_path, "exit 1\n"))
    assert cli.main(["site-config"]) == 2
    assert "confdir gave no folder" in capsys.readouterr().err


# -- a scheduler module of the site's own -----------------------------------------------

CLASS_ONLY = '''"""A FIFO with no mod_main: flux-python makes one for its single class
(the base class is not imported by name, or it would be a second one)."""

import flux.scheduler
from flux.resource import InsufficientResources


class OwnFIFO(flux.scheduler.Scheduler):
    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                R = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                return
            self._queue.pop(0)
            job.request.success(R)
'''


def _run_one_job(loader: Path, args=()) -> MockBroker:
    broker = MockBroker(Machine.uniform(2, 4))
    try:
        broker.load(str(loader), ["queue-depth=unlimited", *args])
        job = broker.jobs.submit(
            make_jobspec(nodes=1, slots=1, cores=4, duration=10), runtime=5
        )
        broker.run()
        assert broker.jobs.job(job).result == "completed"
    finally:
        broker.close()
    return broker


def test_a_module_of_the_sites_own_is_installed_beside_the_reference_ones(
    tmp_path, capsys
):
    own = tmp_path / "src" / "own_fifo.py"
    own.parent.mkdir()
    own.write_text(CLASS_ONLY)
    site = tmp_path / "site"
    argv = ["site-config", str(site), f"--module=own-fifo={own}"]
    assert cli.main([*argv, "--priority=own-fifo=60"]) == 0
    entries = _entries(site)
    assert sorted(entries) == sorted([*NAMES.values(), "own-fifo"])
    entry = entries["own-fifo"]
    assert entry["provides"] == ["sched", "feasibility"]
    assert entry["priority"] == 60
    loader = Path(entry["module"])
    assert loader == site.resolve() / "modules" / "own-fifo.py"
    assert str(own.resolve()) in loader.read_text()
    assert 'sched = "own-fifo"' in capsys.readouterr().out
    _run_one_job(loader)  # the written file runs the site's module
    assert cli.main(["site-config", str(site), "--remove"]) == 0
    assert not loader.exists()


def test_a_site_module_on_the_base_library_gets_its_arguments_checked(tmp_path, capsys):
    own = tmp_path / "my_easy.py"
    own.write_text(reference_path("easy").read_text())
    argv = ["site-config", str(tmp_path / "site"), f"--module=my-easy={own}"]
    assert cli.main([*argv, "--args=my-easy=queue-depth=nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flux-schedkit site-config: --args my-easy:")
    assert not (tmp_path / "site").exists()
    assert cli.main([*argv, "--args=my-easy=queue-depth=8"]) == 0
    entry = _entries(tmp_path / "site")["my-easy"]
    assert entry["args"] == ["queue-depth=8"]
    broker = _run_one_job(Path(entry["module"]))
    assert broker is not None


@pytest.mark.parametrize(
    "item, message",
    [
        ("own", "expected NAME=PATH"),
        ("9lives={file}", "a module name is a letter"),
        ("schedkit-easy={file}", "the name 'schedkit-easy' is taken"),
        ("easy={file}", "the name 'easy' is taken"),
        ("own={missing}", "no such file"),
        ("own={empty}", "--module own: empty: no mod_main() or BrokerModule"),
    ],
)
def test_bad_module_options_are_usage_errors_that_write_nothing(
    tmp_path, capsys, item, message
):
    source = tmp_path / "own.py"
    source.write_text(CLASS_ONLY)
    empty = tmp_path / "empty.py"
    empty.write_text("")
    item = item.format(file=source, missing=tmp_path / "missing.py", empty=empty)
    site = tmp_path / "site"
    assert cli.main(["site-config", str(site), f"--module={item}"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not site.exists()
