"""The watcher of one background shell job (`core.capture.background_shell`): a detached process
that waits for the job's process to exit and writes that moment beside the store, so a scan knows
which of the job's writes came before its end (the job's) and which after (someone else's).

`python -m rewind_ls.core.capture.background_end END_FILE PID:START-TIME`. It waits on a pidfd
(Linux 5.3+: woken the moment the process exits), else polls every 50 ms. A pid that now names
another process (its start time differs) is a job already gone.
"""

from __future__ import annotations

import os
import select
import sys
import time

from rewind_ls.core.capture import background_shell, shell_runs


def wait_gone(process: str) -> None:
    """Return once the process `process` ("pid:start-time") has exited."""
    pid_text, _, _ = process.partition(":")
    if not pid_text.isdigit():
        return
    pidfd = -1
    try:
        pidfd = os.pidfd_open(int(pid_text))
    except (AttributeError, OSError):
        pidfd = -1
    try:
        # Checked after the pidfd is open: a pid reused before that is not the job.
        if pidfd >= 0 and shell_runs.agent_alive(process):
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            poller.poll()
            return
    finally:
        if pidfd >= 0:
            os.close(pidfd)
    while shell_runs.agent_alive(process):
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: background_end END_FILE PID:START-TIME\n")
        return 2
    end_file, process = argv
    wait_gone(process)
    background_shell.write_end(end_file, time.time_ns(), True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
