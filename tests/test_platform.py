"""The platform module (core/fs/disk_sync.py): portable mode turns every Linux-only call off, the macOS
equivalents are chosen by platform, and native Windows stops with one line.

The store, capture and restore tests also run a second time with REWIND_LS_PORTABLE=1
(scripts/test.sh, PORTABLE_TESTS), which is what shows the fallbacks work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.capture import watch_journal
from rewind_ls.core.fs import disk_sync


class NoLibc:
    """A libc whose every call fails the test: portable mode must not reach it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"portable mode called libc {name}")


def test_portable_mode_makes_no_linux_only_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REWIND_LS_PORTABLE", "1")
    monkeypatch.setattr(disk_sync, "_libc", NoLibc())
    (tmp_path / "a").write_text("a")
    assert disk_sync.rename_noreplace(str(tmp_path / "a"), str(tmp_path / "b")) is None
    assert (tmp_path / "a").exists(), "nothing moved: the caller's link + unlink does it"
    assert disk_sync.can_flush_many() is False
    assert disk_sync.inotify_available() is False
    assert watch_journal.enabled() is False

    def no_proc(path: Any, *a: Any, **k: Any) -> Any:
        raise AssertionError(f"portable mode opened {path}")

    monkeypatch.setattr("builtins.open", no_proc)
    assert disk_sync.process_alive(os.getpid()) is True


def test_linux_mode_uses_the_linux_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.fail("this test describes Linux; on macOS its portable twin is the one that runs")
    monkeypatch.delenv("REWIND_LS_PORTABLE", raising=False)
    (tmp_path / "a").write_text("a")
    (tmp_path / "c").write_text("c")
    assert disk_sync.rename_noreplace(str(tmp_path / "a"), str(tmp_path / "b")) is True
    assert disk_sync.rename_noreplace(str(tmp_path / "b"), str(tmp_path / "c")) is False
    assert (tmp_path / "c").read_text() == "c"
    assert disk_sync.can_flush_many() is True


@pytest.mark.parametrize("portable", ["0", "1"])
def test_a_zombie_is_dead_and_a_live_process_alive(
    portable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Process liveness (a recovery's owner check) with /proc and without it (`ps`)."""
    monkeypatch.setenv("REWIND_LS_PORTABLE", portable)
    live = subprocess.Popen(["sleep", "30"])
    dead = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while disk_sync.process_alive(dead.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # `true` exits at once, and stays a zombie until waited for
        assert disk_sync.process_alive(dead.pid) is False
        assert disk_sync.process_alive(live.pid) is True
    finally:
        live.kill()
        live.wait()
        dead.wait()
    assert disk_sync.process_alive(dead.pid) is False


def test_macos_full_fsync(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On macOS fsync_file asks for F_FULLFSYNC (its fsync leaves data in the drive's cache)."""
    import fcntl

    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(fcntl, "F_FULLFSYNC", 51, raising=False)
    monkeypatch.setattr(fcntl, "fcntl", lambda fd, op, *a: calls.append((fd, op)) or 0)
    fd = os.open(tmp_path / "f", os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        disk_sync.fsync_file(fd)
    finally:
        os.close(fd)
    assert calls == [(fd, 51)]


def test_macos_rename_uses_renameatx_np(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    class MacLibc:
        def renameatx_np(self, *args: Any) -> int:
            calls.append(args)
            return 0

    monkeypatch.delenv("REWIND_LS_PORTABLE", raising=False)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(disk_sync, "_libc", MacLibc())
    assert disk_sync.rename_noreplace("/x/a", "/x/b") is True
    assert calls == [(-100, b"/x/a", -100, b"/x/b", 0x4)]  # RENAME_EXCL
    assert disk_sync.can_flush_many() is False, "no syncfs on macOS: each file is fsynced"
    assert disk_sync.inotify_available() is False


def test_windows_stops_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rewind_ls.cli import main

    monkeypatch.setattr(sys, "platform", "win32")
    assert main(["turns"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WSL" in err, err
