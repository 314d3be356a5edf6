"""A real Linux guest on the live device (issue 14, section 4): examples/guest/linux_guest.py
boots Debian's cloud kernel under QEMU (TCG) with an NVMe disk on `ssdlab serve`, makes an ext4
file system, writes 8 MiB and small files, reboots, and reads them back with equal checksums."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples/guest/linux_guest.py"


def test_a_linux_guest_reads_back_its_files_after_a_reboot() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--short"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "checksums after the reboot: identical" in done.stdout
    assert "0 mismatched sectors" in done.stdout
    assert "/mnt/data" in done.stdout
