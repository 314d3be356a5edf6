"""A real Linux guest on the simulated SSD (docs/live-device.md, "A Linux guest").

Boots Debian's cloud kernel under QEMU (TCG: no KVM needed) with its disk on `ssdlab serve`, as
an NVMe controller (`-drive driver=nbd` + `-device nvme`): the guest's own NVMe driver, queues
and ext4 run against the model. First boot: make a file system, write files, sync, checksum,
and time 4 KiB direct reads at queue depth 1. Second boot (a fresh QEMU, the same server):
mount, read back and compare the checksums. Then the server stops and the guest's measured read
latency is printed beside the model's.

    python examples/guest/linux_guest.py [CONFIG] [--short] [--work DIR]

Needs Debian's qemu-system-x86 and busybox-static (`make test` installs them) and downloads
the kernel package once (`apt-get download`, into DIR/kernel).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.live import Server

HERE = Path(__file__).resolve().parent
DEFAULT_CONFIG = HERE / "guest-ssd.toml"

# The guest's /init: phase "write" makes the file system and the files, phase "verify" reads
# them back. Lines starting with "SSDLAB " are what the host reads from the console.
INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
phase=$(sed -n 's/.*ssdlab_phase=\([a-z]*\).*/\1/p' /proc/cmdline)
mb=$(sed -n 's/.*ssdlab_mb=\([0-9]*\).*/\1/p' /proc/cmdline)
disk=/dev/nvme0n1
n=0
while [ ! -b $disk ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
[ -b $disk ] || { echo "SSDLAB ERROR no $disk"; poweroff -f; }
queues=$(ls -d /sys/block/nvme0n1/mq/* | wc -l)
echo "SSDLAB DISK $(cat /sys/block/nvme0n1/size) sectors, $queues queues"
mkdir -p /mnt
if [ "$phase" = write ]; then
    mke2fs -q $disk || { echo "SSDLAB ERROR mke2fs"; poweroff -f; }
    mount -t ext4 $disk /mnt || { echo "SSDLAB ERROR mount"; poweroff -f; }
    dd if=/dev/urandom of=/mnt/data bs=1M count=$mb 2>/dev/null
    for i in 1 2 3 4; do echo "file $i $(date)" > /mnt/small$i; done
    sync
    md5sum /mnt/data /mnt/small1 /mnt/small4 | sed 's/^/SSDLAB SUM /'
    umount /mnt
    start=$(cat /proc/uptime | cut -d' ' -f1)
    dd if=$disk of=/dev/null bs=4k count=1000 iflag=direct 2>/dev/null
    end=$(cat /proc/uptime | cut -d' ' -f1)
    echo "SSDLAB READS 1000 $start $end"
else
    mount -t ext4 $disk /mnt || { echo "SSDLAB ERROR mount"; poweroff -f; }
    md5sum /mnt/data /mnt/small1 /mnt/small4 | sed 's/^/SSDLAB SUM /'
    umount /mnt
fi
sync
echo "SSDLAB DONE $phase"
poweroff -f
"""


def kernel(work: Path) -> Path:
    """Debian's cloud kernel (NVMe and ext4 built in), downloaded once with apt-get."""
    found = sorted((work / "kernel").glob("boot/vmlinuz-*"))
    if found:
        return found[-1]
    depends = subprocess.run(
        ["apt-cache", "depends", "linux-image-cloud-amd64"], capture_output=True, text=True
    ).stdout
    match = re.search(r"Depends: (linux-image-\S+)", depends)
    if match is None:
        sys.exit("linux-image-cloud-amd64 is not known to apt: run apt-get update")
    download = work / "download"
    download.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", "-q", match.group(1)], cwd=download, check=True)
    deb = next(download.glob("linux-image-*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "kernel")], check=True)
    return sorted((work / "kernel").glob("boot/vmlinuz-*"))[-1]


def initramfs(path: Path) -> Path:
    """A gzipped newc cpio archive: static busybox and the /init above."""
    busybox = Path("/bin/busybox")
    if not busybox.exists():
        sys.exit("/bin/busybox is missing: apt-get install busybox-static")
    entries = [
        ("bin", 0o40755, b""),
        ("dev", 0o40755, b""),
        ("proc", 0o40755, b""),
        ("sys", 0o40755, b""),
        ("mnt", 0o40755, b""),
        ("bin/busybox", 0o100755, busybox.read_bytes()),
        ("init", 0o100755, INIT.encode()),
    ]
    archive = bytearray()

    def add(name: str, mode: int, data: bytes, ino: int) -> None:
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        archive.extend(b"070701" + b"".join(b"%08X" % f for f in fields))
        archive.extend(name.encode() + b"\0")
        archive.extend(b"\0" * (-len(archive) % 4))
        archive.extend(data)
        archive.extend(b"\0" * (-len(archive) % 4))

    for ino, (name, mode, data) in enumerate(entries, start=1):
        add(name, mode, data, ino)
    add("TRAILER!!!", 0, b"", 0)
    path.write_bytes(gzip.compress(bytes(archive)))
    return path


def boot(vmlinuz: Path, initrd: Path, sock: Path, phase: str, mb: int, cpus: int) -> list[str]:
    """One guest boot; returns its SSDLAB console lines (the whole console is kept beside the
    socket, as console-PHASE.log)."""
    cmd = [
        "qemu-system-x86_64",
        "-accel",
        "tcg",
        "-m",
        "256",
        "-smp",
        str(cpus),
        "-nographic",
        "-no-reboot",
        "-kernel",
        str(vmlinuz),
        "-initrd",
        str(initrd),
        "-append",
        f"console=ttyS0 quiet panic=-1 ssdlab_phase={phase} ssdlab_mb={mb}",
        "-drive",
        f"if=none,id=d0,driver=nbd,server.type=unix,server.path={sock}",
        "-device",
        "nvme,drive=d0,serial=ssdlab0",
    ]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )
    (sock.parent / f"console-{phase}.log").write_text(done.stdout + done.stderr)
    # Kernel messages may share a console line with the script's output.
    lines = [
        line[line.index("SSDLAB ") :].strip()
        for line in done.stdout.splitlines()
        if "SSDLAB " in line
    ]
    if not any(line.startswith(f"SSDLAB DONE {phase}") for line in lines):
        sys.exit(
            f"the guest's {phase} boot did not finish:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    errors = [line for line in lines if line.startswith("SSDLAB ERROR")]
    if errors:
        sys.exit("\n".join(errors))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--short", action="store_true", help="write 8 MiB instead of 64 MiB")
    parser.add_argument("--work", type=Path, default=None, help="kernel cache and run folder")
    parser.add_argument(
        "--cpus", type=int, default=1, help="guest CPUs (the NVMe driver makes a queue per CPU)"
    )
    args = parser.parse_args()
    for tool in ("qemu-system-x86_64", "apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing (Debian's qemu-system-x86; make test installs it)")
    work = args.work or Path(
        os.environ.get("SSDLAB_GUEST_CACHE", Path.home() / ".cache/ssdlab-guest")
    )
    work.mkdir(parents=True, exist_ok=True)
    vmlinuz = kernel(work)
    run_dir = Path(tempfile.mkdtemp(prefix="ssdlab-guest-"))
    initrd = initramfs(run_dir / "initramfs.gz")
    sock, out = run_dir / "ssd.sock", run_dir / "results"
    with Server(args.config, sock, out=out):
        mb = 8 if args.short else 64
        started = time.monotonic()
        first = boot(vmlinuz, initrd, sock, "write", mb, args.cpus)
        second = boot(vmlinuz, initrd, sock, "verify", mb, args.cpus)
        wall = time.monotonic() - started
    sums_written = [line for line in first if line.startswith("SSDLAB SUM")]
    sums_read = [line for line in second if line.startswith("SSDLAB SUM")]
    results = json.loads((out / "results.json").read_text())
    reads = next(line.split() for line in first if line.startswith("SSDLAB READS"))
    guest_us = (float(reads[4]) - float(reads[3])) / int(reads[2]) * 1e6
    busy = [f for f in results["flows"] if f["requests"]]
    model_read_us = busy[0]["reads"]["latency_us"]["mean"] if busy else float("nan")
    for line in first:
        if line.startswith("SSDLAB DISK"):
            print(line[7:])
    print(f"two boots in {wall:.1f} s; {mb} MiB written, read back after a reboot:")
    for line in sums_written:
        print("  ", line[11:])
    same = sums_written == sums_read
    print("checksums after the reboot:", "identical" if same else "DIFFERENT")
    print(f"guest: 4 KiB direct reads at QD 1 took {guest_us:.0f} us each (TCG guest included)")
    model_reads = busy[0]["reads"]["count"] if busy else 0
    print(f"model: mean read latency {model_read_us:.1f} us over {model_reads} reads")
    print(f"live: {json.dumps(results['live'])}")
    print(f"data: {results['data']['mismatched_sectors']} mismatched sectors; results in {out}")
    return 0 if same and results["data"]["mismatched_sectors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
