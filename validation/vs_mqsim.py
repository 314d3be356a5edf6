"""ssdlab beside MQSim on the same XML pair (issue 15).

Builds MQSim @7ec40e3 from its unmodified source (../shared/mqsim, or $SSDLAB_MQSIM_SOURCE),
runs each case's ssdconfig.xml + workload.xml through MQSim and through `ssdlab run` (the default
model, and `compat = "mqsim"`), and prints one table: per flow, request count, mean and max
latency from each, their ratios, and each side's wall time and peak RSS (the speed ratio is a
result too). Everything goes under results/vs_mqsim/ (the XML pairs, MQSim's
`*_scenario_<n>.xml`, ssdlab's results.json, and table.json).

    python validation/vs_mqsim.py                 # the matrix (minutes)
    python validation/vs_mqsim.py --cases rr-qd32 --requests 5000
    python validation/vs_mqsim.py --sample        # MQSim's own workload.xml too (slow)
    python validation/vs_mqsim.py --cases "" --interference   # the interference curves

Notes on MQSim's outputs: its IOPS field divides by whole simulated seconds (`inf` below one
second), so the table compares request counts and latencies; for the closed-loop (queue depth)
cases the throughput follows from them (Little's law: IOPS = queue depth / mean latency).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "vs_mqsim"
MQSIM_VERSION = "7ec40e3"
MODELS = {"default": [], "mqsim": ["--set", 'compat="mqsim"']}


def mqsim_source() -> Path | None:
    """Where MQSim's source and build script are, if anywhere."""
    candidates = [os.environ.get("SSDLAB_MQSIM_SOURCE"), ROOT.parent / "shared" / "mqsim"]
    for c in candidates:
        if c and (Path(c) / "build-mqsim.sh").exists():
            return Path(c)
    return None


def build_mqsim(source: Path) -> Path:
    """MQSim's binary, built once into ~/.cache/ssdlab-mqsim/<version> (about 45 s)."""
    dest = Path.home() / ".cache" / "ssdlab-mqsim" / MQSIM_VERSION
    binary = dest / "MQSim"
    if not binary.exists():
        subprocess.run(["bash", str(source / "build-mqsim.sh"), str(dest)], check=True)
    return binary


@dataclass(frozen=True)
class Case:
    """One synthetic flow on MQSim's default device (ideal map, cache off, empty drive unless
    the case says otherwise)."""

    name: str
    read_percentage: int
    sectors: int
    queue_depth: int
    address: str = "RANDOM_UNIFORM"
    ideal_map: bool = True
    cache: str = "TURNED_OFF"
    occupancy: int = 0
    device: dict[str, str] = field(default_factory=dict)
    # A second flow of 4 KiB random reads at this queue depth beside the first (interference),
    # both stopped at `stop_ms` of simulated time instead of after a request count.
    aggressor_queue_depth: int | None = None
    stop_ms: int | None = None


MATRIX = [
    Case("rr-qd1", 100, 8, 1),
    Case("rr-qd32", 100, 8, 32),
    Case("rw-qd1", 0, 8, 1),
    Case("rw-qd32", 0, 8, 32),
    Case("sr64k-qd8", 100, 128, 8, address="STREAMING"),
    Case("sw64k-qd8", 0, 128, 8, address="STREAMING"),
    Case("rr-qd32-cmt", 100, 8, 32, ideal_map=False),
    Case("rw-qd32-wcache", 0, 8, 32, cache="WRITE_CACHE"),
    Case("sw64k-qd8-wcache", 0, 128, 8, address="STREAMING", cache="WRITE_CACHE"),
]

# The interference curves (issue 15): a QD 2 reader alone and beside a second reader at QD 2 to
# 256, with MQSim's QueueFetchSize at 16 and 1024; `--interference` runs them, and the table's
# `slowdown` column is the reader's mean latency over its mean alone.
INTERFERENCE = [
    Case(
        f"intf-fetch{fetch}-" + (f"qd{qd}" if qd else "alone"),
        100,
        8,
        2,
        aggressor_queue_depth=qd,
        stop_ms=100,
        device={"Queue_Fetch_Size": str(fetch)},
    )
    for fetch in (16, 1024)
    for qd in (None, 2, 8, 32, 128, 256)
]


def workload_xml(case: Case, requests: int) -> str:
    flows = [flow_xml(case, requests, case.queue_depth, seed=12)]
    if case.aggressor_queue_depth is not None:
        flows.append(flow_xml(case, requests, case.aggressor_queue_depth, seed=34))
    return scenario_xml(flows)


def scenario_xml(flows: list[str]) -> str:
    """A workload.xml of one scenario holding these flows (`synthetic_flow_xml`)."""
    return (
        '<?xml version="1.0" encoding="us-ascii"?>\n<MQSim_IO_Scenarios><IO_Scenario>'
        + "".join(flows)
        + "</IO_Scenario></MQSim_IO_Scenarios>\n"
    )


def synthetic_flow_xml(tags: dict[str, str]) -> str:
    """One `<IO_Flow_Parameter_Set_Synthetic>` with these tags, in their order."""
    body = "".join(f"<{k}>{v}</{k}>" for k, v in tags.items())
    return f"<IO_Flow_Parameter_Set_Synthetic>{body}</IO_Flow_Parameter_Set_Synthetic>"


def flow_xml(case: Case, requests: int, queue_depth: int, seed: int) -> str:
    stop_ns = case.stop_ms * 1_000_000 if case.stop_ms else 0
    tags = {
        "Priority_Class": "HIGH",
        "Device_Level_Data_Caching_Mode": case.cache,
        "Channel_IDs": "0,1,2,3,4,5,6,7",
        "Chip_IDs": "0,1,2,3",
        "Die_IDs": "0,1",
        "Plane_IDs": "0,1",
        "Initial_Occupancy_Percentage": str(case.occupancy),
        "Working_Set_Percentage": "100",
        "Synthetic_Generator_Type": "QUEUE_DEPTH",
        "Read_Percentage": str(case.read_percentage),
        "Address_Distribution": case.address,
        "Percentage_of_Hot_Region": "0",
        "Generated_Aligned_Addresses": "true",
        "Address_Alignment_Unit": str(case.sectors),
        "Request_Size_Distribution": "FIXED",
        "Average_Request_Size": str(case.sectors),
        "Variance_Request_Size": "0",
        "Seed": str(seed),
        "Average_No_of_Reqs_in_Queue": str(queue_depth),
        "Intensity": "32768",
        # 0: the flow ends after its requests (a stop time would override the count).
        "Stop_Time": str(stop_ns),
        "Total_Requests_To_Generate": "0" if stop_ns else str(requests),
    }
    return synthetic_flow_xml(tags)


def device_xml(source: Path, case: Case) -> str:
    """MQSim's default ssdconfig.xml with the case's changes."""
    changes = {"Ideal_Mapping_Table": "true" if case.ideal_map else "false", **case.device}
    return changed_device_xml(source, changes)


def changed_device_xml(source: Path, changes: dict[str, str]) -> str:
    """MQSim's default ssdconfig.xml with these tags' values replaced (each must exist)."""
    tree = ET.parse(source / "ssdconfig.xml")
    for tag, value in changes.items():
        element = tree.getroot().find(f".//{tag}")
        if element is None:
            raise KeyError(f"ssdconfig.xml has no <{tag}>")
        element.text = value
    return ET.tostring(tree.getroot(), encoding="unicode")


def run_measured(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """Runs `command`; returns (wall seconds, peak RSS in MiB, output). MQSim waits for a key
    at the end, so its standard input is /dev/null."""
    started = time.monotonic()
    with open(os.devnull) as devnull:
        process = subprocess.Popen(
            command, cwd=cwd, stdin=devnull, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert process.stdout is not None
        output = process.stdout.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{output[-3000:]}")
    return wall, usage.ru_maxrss / 1024, output


def mqsim_flows(path: Path) -> list[dict[str, float]]:
    """Per flow of MQSim's `<workload>_scenario_<n>.xml`: requests, mean and max latency (us)."""
    root = ET.parse(path).getroot()
    flows = []
    for flow in root.iter("Host.IO_Flow"):
        flows.append(
            {
                "name": flow.findtext("Name") or "",
                "requests": int(flow.findtext("Request_Count") or 0),
                "mean_us": float(flow.findtext("End_to_End_Request_Delay") or "nan"),
                "max_us": float(flow.findtext("Max_End_to_End_Request_Delay") or "nan"),
            }
        )
    return flows


def ssdlab_flows(path: Path) -> list[dict[str, float]]:
    """The same numbers from ssdlab's results.json."""
    results = json.loads(path.read_text())
    flows = []
    for flow in results["flows"]:
        ops = [flow[op] for op in ("reads", "writes") if flow[op]["count"]]
        count = sum(op["count"] for op in ops)
        mean = sum(op["latency_us"]["mean"] * op["count"] for op in ops) / count if count else 0
        flows.append(
            {
                "name": flow["name"],
                "requests": flow["requests"],
                "mean_us": mean,
                "max_us": max((op["latency_us"]["max"] for op in ops), default=float("nan")),
            }
        )
    return flows


def run_pair(
    name: str, device: Path, workload: Path, mqsim: Path, models: list[str]
) -> list[dict[str, object]]:
    """Both simulators on one XML pair; one row per scenario and flow."""
    folder = device.parent
    mq_wall, mq_rss, _ = run_measured([str(mqsim), "-i", device.name, "-w", workload.name], folder)
    stem = workload.stem
    scenarios = sorted(
        folder.glob(f"{stem}_scenario_*.xml"), key=lambda p: int(p.stem.split("_")[-1])
    )
    rows: list[dict[str, object]] = []
    ssdlab_runs = {}
    for model in models:
        out = folder / f"ssdlab-{model}"
        command = [sys.executable, "-m", "ssdlab", "run", str(device), str(workload)]
        wall, rss, _ = run_measured([*command, "--out", str(out), *MODELS[model]], folder)
        ssdlab_runs[model] = (out, wall, rss)
    for n, scenario in enumerate(scenarios, start=1):
        theirs = mqsim_flows(scenario)
        for model, (out, wall, rss) in ssdlab_runs.items():
            ours = ssdlab_flows(out / f"scenario-{n}" / "results.json")
            for flow, (a, b) in enumerate(zip(theirs, ours, strict=True)):
                rows.append(
                    {
                        "case": name,
                        "scenario": n,
                        "flow": flow,
                        "model": model,
                        "mqsim_requests": a["requests"],
                        "ssdlab_requests": b["requests"],
                        "mqsim_mean_us": a["mean_us"],
                        "ssdlab_mean_us": round(b["mean_us"], 1),
                        "mean_ratio": round(b["mean_us"] / a["mean_us"], 3)
                        if a["mean_us"]
                        else None,
                        "mqsim_max_us": a["max_us"],
                        "ssdlab_max_us": round(b["max_us"], 1),
                        "max_ratio": ratio(b["max_us"], a["max_us"]),
                        "mqsim_wall_s": round(mq_wall, 2),
                        "ssdlab_wall_s": round(wall, 2),
                        "speedup": round(mq_wall / wall, 1),
                        "mqsim_rss_mib": round(mq_rss),
                        "ssdlab_rss_mib": round(rss),
                    }
                )
    return rows


def add_slowdowns(rows: list[dict[str, object]]) -> None:
    """Each interference case's reader (flow 0): its mean latency over its mean alone, for
    MQSim and for ssdlab (per model), and the ratio of the two slowdowns."""
    alone = {
        (str(r["case"]).rsplit("-", 1)[0], r["model"]): r
        for r in rows
        if str(r["case"]).endswith("-alone")
    }
    for r in rows:
        base = alone.get((str(r["case"]).rsplit("-", 1)[0], r["model"]))
        if base is None or r["flow"] != 0 or str(r["case"]).endswith("-alone"):
            continue
        theirs = float(r["mqsim_mean_us"]) / float(base["mqsim_mean_us"])
        ours = float(r["ssdlab_mean_us"]) / float(base["ssdlab_mean_us"])
        r["mqsim_slowdown"] = round(theirs, 3)
        r["ssdlab_slowdown"] = round(ours, 3)
        r["slowdown_ratio"] = round(ours / theirs, 3)


def ratio(ours: float, theirs: float) -> float | None:
    return round(ours / theirs, 3) if theirs else None


def print_table(rows: list[dict[str, object]]) -> None:
    columns = [
        ("case", "case"),
        ("scenario", "sc"),
        ("flow", "fl"),
        ("model", "model"),
        ("mqsim_requests", "MQSim req"),
        ("ssdlab_requests", "ssdlab req"),
        ("mqsim_mean_us", "MQSim mean"),
        ("ssdlab_mean_us", "ssdlab mean"),
        ("mean_ratio", "ratio"),
        ("mqsim_max_us", "MQSim max"),
        ("ssdlab_max_us", "ssdlab max"),
        ("max_ratio", "ratio"),
        ("mqsim_wall_s", "MQSim s"),
        ("ssdlab_wall_s", "ssdlab s"),
        ("speedup", "x"),
        ("mqsim_rss_mib", "MQSim MiB"),
        ("ssdlab_rss_mib", "ssdlab MiB"),
    ]
    cells = [[str(r[key]) for key, _ in columns] for r in rows]
    widths = [max(len(t), *(len(c[i]) for c in cells)) for i, (_, t) in enumerate(columns)]
    print("  ".join(t.rjust(w) for (_, t), w in zip(columns, widths, strict=True)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(c.name for c in MATRIX))
    parser.add_argument("--requests", type=int, default=100_000, help="per matrix case")
    parser.add_argument("--models", default="default,mqsim", help="ssdlab models to run")
    parser.add_argument("--sample", action="store_true", help="also MQSim's workload.xml")
    parser.add_argument("--interference", action="store_true", help="also the interference curves")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    source = mqsim_source()
    if source is None:
        sys.exit("MQSim's source is not here: set SSDLAB_MQSIM_SOURCE to ../shared/mqsim")
    if shutil.which("g++") is None and not (Path.home() / ".cache/ssdlab-mqsim").exists():
        sys.exit("g++ is missing: MQSim cannot be built")
    mqsim = build_mqsim(source)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        sys.exit(f"--models: unknown {', '.join(unknown)}; expected {', '.join(MODELS)}")
    wanted = set(args.cases.split(",")) - {""}
    known = MATRIX + INTERFERENCE
    cases = [c for c in known if c.name in wanted]
    if args.interference:
        cases += [c for c in INTERFERENCE if c.name not in wanted]
    if missing := wanted - {c.name for c in known}:
        sys.exit(f"--cases: unknown {', '.join(sorted(missing))}")
    rows: list[dict[str, object]] = []
    for case in cases:
        folder = args.out / case.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "ssdconfig.xml").write_text(device_xml(source, case))
        (folder / "workload.xml").write_text(workload_xml(case, args.requests))
        rows += run_pair(
            case.name, folder / "ssdconfig.xml", folder / "workload.xml", mqsim, models
        )
    if args.sample:
        folder = args.out / "sample"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("MQSim-*", "*.sh"))
        rows += run_pair("sample", folder / "ssdconfig.xml", folder / "workload.xml", mqsim, models)
    add_slowdowns(rows)
    print_table(rows)
    for r in rows:
        if "slowdown_ratio" in r:
            print(
                f"{r['case']} {r['model']}: reader slowed {r['mqsim_slowdown']}x in MQSim, "
                f"{r['ssdlab_slowdown']}x in ssdlab (ratio {r['slowdown_ratio']})"
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out / 'table.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
