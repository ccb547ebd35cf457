"""The startup check, and the module aliasing the substitute installs.

``check_wheel()`` reads the flux-python wheel's source before anything is
replaced and refuses, naming the module and entry point, a wheel that no
longer fits the substitute.  Each failure case edits a private copy of the
installed wheel's ``flux`` directory (in pytest's ``tmp_path``) and points
the check at it; the installed wheel is never touched.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import sys

import pytest

import mock_broker.flux_substitute as fs
from mock_broker.flux_substitute import startup_check
from mock_broker.flux_substitute.finder import SubstituteFinder

#: The installed wheel's ``flux`` directory, located through the import
#: system (before the substitute's finder is consulted for ``flux``) and
#: through the distribution's own file list.
WHEEL_FLUX_DIR = startup_check._wheel_flux_dir()
DIST_FLUX_DIR = str(importlib.metadata.distribution("flux-python").locate_file("flux"))


@pytest.fixture
def wheel_copy(tmp_path, monkeypatch):
    """A private copy of the wheel's flux dir that check_wheel() inspects."""
    copy = tmp_path / "site-packages" / "flux"
    shutil.copytree(
        WHEEL_FLUX_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    monkeypatch.setattr(startup_check, "_wheel_flux_dir", lambda: str(copy))
    return copy


def append(path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n\n" + text.strip() + "\n")


def check_fails(match: str) -> str:
    with pytest.raises(fs.SubstitutionError, match=match) as exc:
        startup_check.check_wheel()
    return str(exc.value)


# --- the installed wheel ------------------------------------------------------


def test_wheel_dir_is_the_installed_distribution():
    assert os.path.samefile(WHEEL_FLUX_DIR, DIST_FLUX_DIR)
    assert os.path.isfile(os.path.join(WHEEL_FLUX_DIR, "scheduler.py"))
    assert "mock_broker" not in WHEEL_FLUX_DIR


def test_installed_wheel_passes():
    info = startup_check.check_wheel()
    assert info.version == fs.PINNED_FLUX_PYTHON == "0.88.0"
    assert os.path.samefile(info.flux_dir, WHEEL_FLUX_DIR)
    assert set(fs.KEPT_MODULES) <= set(info.scanned)
    # modules the kept ones reach are scanned too
    assert {"flux.resource.journal", "flux.abc", "flux.abc.journal"} <= set(
        info.scanned
    )
    # substituted modules are not scanned: their names are checked instead
    assert not set(info.scanned) & set(fs.SUBSTITUTES)


def test_unmodified_copy_passes(wheel_copy):
    info = startup_check.check_wheel()
    assert info.flux_dir == str(wheel_copy)
    assert info.version == "0.88.0"


# --- version ------------------------------------------------------------------


def test_other_version_is_refused(monkeypatch):
    real_version = importlib.metadata.version

    def fake_version(name):
        return "0.89.0" if name == "flux-python" else real_version(name)

    monkeypatch.setattr(startup_check.importlib.metadata, "version", fake_version)
    message = check_fails("flux-python 0.89.0 is installed")
    assert "written for 0.88.0" in message
    assert "install flux-python==0.88.0" in message


def test_missing_flux_python_is_refused(monkeypatch):
    def not_found(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(startup_check.importlib.metadata, "version", not_found)
    check_fails(
        r"flux-python is not installed; install the pinned release "
        r"flux-python==0\.88\.0"
    )


# --- wheel layout -------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "module"),
    [
        ("scheduler.py", "flux.scheduler"),
        ("resource/TreePool.py", "flux.resource.TreePool"),
        ("resource/Rv1Pool.py", "flux.resource.Rv1Pool"),
    ],
)
def test_missing_kept_module_is_named(wheel_copy, relpath, module):
    os.remove(wheel_copy / relpath)
    message = check_fails(f"kept module {module} is missing")
    assert str(wheel_copy) in message


def test_module_imported_by_kept_code_must_exist(wheel_copy):
    append(wheel_copy / "resource" / "Rv1Set.py", "from flux.brand_new import helper")
    check_fails(
        r"module flux\.brand_new \(imported by kept code\) is neither in the "
        r"wheel nor substituted"
    )


# --- native entry points and substitute names --------------------------------


def test_new_lib_entry_point_is_named(wheel_copy):
    append(
        wheel_copy / "scheduler.py",
        """
def _uses_new_entry_point(h):
    return lib.flux_something_new(h.handle)
""",
    )
    check_fails(
        r"flux\.scheduler calls native entry point lib\.flux_something_new, "
        r"which the substitute _flux\._core does not provide"
    )


def test_known_lib_constant_is_accepted(wheel_copy):
    # lib.FLUX_* constants come from the substitute's constants table
    append(
        wheel_copy / "scheduler.py",
        """
def _uses_constant():
    return lib.FLUX_ROLE_OWNER
""",
    )
    startup_check.check_wheel()


def test_new_ffi_operation_is_named(wheel_copy):
    append(
        wheel_copy / "brokermod.py",
        """
def _uses_new_ffi():
    return ffi.gc(None, None)
""",
    )
    check_fails(r"flux\.brokermod uses ffi\.gc, which the substitute _flux\._core")


def test_name_missing_from_a_substitute_is_named(wheel_copy):
    append(wheel_copy / "scheduler.py", "from flux.kvs import something_new")
    check_fails(
        r"flux\.scheduler imports something_new from flux\.kvs, which the "
        r"substitute mock_broker\.flux_substitute\.kvs does not define"
    )


def test_unsubstituted_native_module_is_named(wheel_copy):
    append(wheel_copy / "scheduler.py", "from _flux._newthing import ffi")
    check_fails(
        r"flux\.scheduler imports native module _flux\._newthing, which is not "
        r"substituted"
    )


def test_native_import_deep_in_the_import_graph_is_found(wheel_copy):
    # flux.abc.journal is reached only through flux.resource -> .journal -> flux.abc
    append(wheel_copy / "abc" / "journal.py", "from _flux._newthing import lib")
    check_fails(r"flux\.abc\.journal imports native module _flux\._newthing")


def test_lazy_rhwloc_import_is_tolerated_only_where_it_is_lazy(wheel_copy):
    treepool = wheel_copy / "resource" / "TreePool.py"
    assert "    from _flux._rhwloc_treepool import ffi, lib" in treepool.read_text()
    startup_check.check_wheel()
    append(treepool, "from _flux._rhwloc_treepool import ffi as _eager_ffi")
    check_fails(
        r"flux\.resource\.TreePool imports native module _flux\._rhwloc_treepool"
    )


@pytest.mark.parametrize(
    "call",
    [
        "self._h.brand_new_method()",
        "self.handle.brand_new_method()",
        "h.brand_new_method()",
    ],
)
def test_missing_handle_method_is_named(wheel_copy, call):
    append(
        wheel_copy / "brokermod.py",
        f"""
class _UsesNewHandleMethod:
    def run(self, h):
        return {call}
""",
    )
    check_fails(
        r"flux\.brokermod calls handle method brand_new_method\(\), which the "
        r"substitute flux\.core\.handle\.Flux does not provide"
    )


def test_existing_handle_method_is_accepted(wheel_copy):
    append(
        wheel_copy / "brokermod.py",
        """
class _UsesKnownHandleMethod:
    def run(self):
        return self._h.get_rank()
""",
    )
    startup_check.check_wheel()


# --- aliasing: what install() put in place --------------------------------------


def test_native_flux_available_is_false_whether_or_not_core_was_imported(
    monkeypatch,
):
    # Not yet imported: the check imports _flux._core and finds the substitute.
    monkeypatch.delitem(sys.modules, "_flux._core", raising=False)
    assert fs.native_flux_available() is False
    assert sys.modules["_flux._core"].IS_SUBSTITUTE is True
    # Already imported: answered from sys.modules.
    assert fs.native_flux_available() is False


def test_install_is_active_and_idempotent():
    assert fs.native_flux_available() is False
    assert fs.install() is True
    assert fs.install() is True
    finders = [f for f in sys.meta_path if isinstance(f, SubstituteFinder)]
    assert len(finders) == 1
    import _flux._core

    assert _flux._core.IS_SUBSTITUTE is True


def test_substituted_modules_are_the_project_modules():
    import flux.idset
    import flux.kvs

    import mock_broker.flux_substitute.idset
    import mock_broker.flux_substitute.kvs

    assert flux.kvs is mock_broker.flux_substitute.kvs
    assert flux.idset.IDset is mock_broker.flux_substitute.idset.IDset
    for name, target in fs.SUBSTITUTES.items():
        assert importlib.import_module(name) is importlib.import_module(target), name


def test_kept_modules_load_from_the_wheel():
    project_dir = os.path.dirname(os.path.abspath(fs.__file__))
    for name in fs.KEPT_MODULES:
        module = importlib.import_module(name)
        path = os.path.abspath(module.__file__)
        assert os.path.commonpath([path, WHEEL_FLUX_DIR]) == WHEEL_FLUX_DIR, name
        assert not path.startswith(project_dir), name
    import flux.scheduler

    assert flux.scheduler.__file__ == os.path.join(WHEEL_FLUX_DIR, "scheduler.py")
    # the kept code sees the substitute's classes, not copies of them
    import mock_broker.flux_substitute.idset

    rv1set_module = importlib.import_module("flux.resource.Rv1Set")
    assert rv1set_module.IDset is mock_broker.flux_substitute.idset.IDset


def test_nothing_is_installed_over_a_native_libflux(tmp_path):
    # A stand-in for a real, libflux-backed _flux._core, first on sys.path:
    # install() must see it, leave sys.meta_path alone and report False.
    native = tmp_path / "_flux"
    native.mkdir()
    (native / "_core.py").write_text("ffi = lib = object()\n")
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from mock_broker import flux_substitute\n"
        "before = list(sys.meta_path)\n"
        "assert flux_substitute.install() is False\n"
        "assert sys.meta_path == before\n"
        "assert 'flux' not in sys.modules\n"
        "print('native kept')\n"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "native kept"


def test_importing_the_jobid_submodule_leaves_the_class_bound():
    # flux.job.JobID is both a submodule and the class flux.job exports;
    # importing the submodule by name (as test_substituted_modules_... does)
    # once rebound the name to the module, and every scheduler loaded after
    # that in the same process failed on JobID(jobid).
    importlib.import_module("flux.job.JobID")
    from flux.job import JobID

    assert isinstance(JobID, type)
    assert int(JobID(1234)) == 1234
