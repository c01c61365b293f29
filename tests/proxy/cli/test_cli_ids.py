"""CLI subcommands refuse an empty id argument as a usage error (exit 2, one
line naming the argument) instead of a store traceback or a silent no-op."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ctxproxy.proxy.cli.main import main
from ctxproxy.store import open_store


@pytest.fixture
def data_dir(tmp_path):
    open_store(str(tmp_path / "store")).close()
    return str(tmp_path)


@pytest.mark.parametrize("argv, arg", [
    (["manifest", "show", ""], "TURN_ID"),
    (["manifest", "show", "--session", " "], "--session"),
    (["manifest", "show", "t1", "--tenant", ""], "--tenant"),
    (["pruned", "show", ""], "ID"),
    (["pruned", "list", "--session", ""], "--session"),
    (["effects", "get", ""], "key"),
    (["effects", "list", "--session", ""], "--session"),
    (["effects", "list", "--task", ""], "--task"),
    (["effects", "list", "--session", "s", "--tenant", ""], "--tenant"),
    (["effects", "resolve", "", "--resolution", "failed"], "key"),
    (["effects", "resolve", "k", "--resolution", "failed", "--call-id", ""], "--call-id"),
    (["effects", "forget", "--session", ""], "--session"),
    (["effects", "forget", "--subject", "", "--dry-run"], "--subject"),
    (["effects", "forget", "--session", "s", "--request-id", ""], "--request-id"),
])
def test_empty_ids_are_usage_errors(data_dir, capsys, argv, arg):
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--data-dir", data_dir])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(f"error: argument {arg}: must not be empty"), err


@pytest.mark.parametrize("argv, arg", [
    (["effects", "key", "--tool", "", "--task", "t"], "--tool"),
    (["effects", "key", "--tool", "Bash", "--task", ""], "--task"),
    (["effects", "key", "--tool", "Bash", "--session", ""], "--session"),
    (["manifest", "show", "t1", "--data-dir", ""], "--data-dir"),
])
def test_empty_values_without_a_store(capsys, argv, arg):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert f"error: argument {arg}: must not be empty" in capsys.readouterr().err


def test_serve_with_an_empty_data_dir(tmp_path):
    """In a subprocess with a deadline: a regression would start serving."""
    p = subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", "--data-dir", "", "--port", "0"],
                       capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2
    assert "error: argument --data-dir: must not be empty" in p.stderr


def test_ids_that_are_not_empty_still_work(data_dir, capsys):
    assert main(["pruned", "show", "nosuch", "--data-dir", data_dir]) == 1
    assert "no pruned output 'nosuch'" in capsys.readouterr().err
    assert main(["effects", "key", "--tool", "Bash", "--task", "t"]) == 0
    assert len(capsys.readouterr().out.strip()) >= 16
