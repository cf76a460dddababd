"""`python -m plates.server.reaper PGID [SHM_PREFIX]`: kill a process group when the process that started it dies.

The servers started here run in sessions of their own, so that stopping one stops what it started (Triton's stubs).
That also keeps them alive when their parent is killed with -9 (the OOM killer, a CI timeout, `kill -9` of
`plates serve`): Triton would go on holding its ports, its 2 GB and its shared memory. So beside each one a reaper
runs, reading a pipe whose only writer is the parent. The kernel closes it when the parent dies, however it dies;
the reaper then kills the group and removes its shared-memory files. PR_SET_PDEATHSIG would need no process, but it
fires when the thread that started the child exits, not the process, and needs code run between fork and exec.
"""

from __future__ import annotations

import os
import signal
import sys

from plates.server.child_process import remove_shm


def main(argv: list[str]) -> int:
    pgid, shm_prefix = int(argv[0]), argv[1] if len(argv) > 1 else None
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to handle: it stops the group itself
    while sys.stdin.buffer.read(4096):  # nothing is ever written: this returns at end of file
        pass
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if shm_prefix:
        remove_shm(shm_prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
