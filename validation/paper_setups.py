"""The MQSim paper's own interference setups, run through MQSim and ssdlab side by side (issue 15).

The other validation scripts run the paper's studies on ssdlab alone, with setups of our own
where the paper's differ or were not known. This one writes each study as the MQSim XML pair the
paper describes and runs it through MQSim @7ec40e3 (built from ../shared/mqsim), through ssdlab's
default model and through `compat = "mqsim"`, then prints per study: each flow's slowdown, the
fairness and the weighted speedup from each simulator, beside the paper's number.

- Back end: Flow-1 random 8 KiB reads at QD 2, Flow-2 random 8 KiB reads at QD 2-256, both on
  all channels, ideal mapping table, no data cache. Paper: Flow-1 slows down 14.4x at QD 256.
- CMT: Flow-1 sequential 8 KiB reads on channels 1-4, Flow-2 8 KiB reads on channels 5-8 with
  its randomness swept from 0 (sequential) to 1 (uniform), QD 8 each, the paper's 4 MB CMT
  scaled with the drive. Paper: 2.1x at full randomness. MQSim has no partly random flow, so its
  column has the two ends only; ssdlab's intermediate points use `flows[].random_fraction`
  (fio's `percentage_random`).
- Write cache: Flow-1 random 8 KiB writes at QD 8 on channels 1-4, Flow-2 the same on channels
  5-8 at QD 8-256, both through the shared 256 MB write cache. Paper: more than 50 % of the
  weighted speedup lost.

The drive is MQSim's default (the paper's Table 3) with 256 blocks per plane instead of 2048
(64 GiB): MQSim preconditions the full 512 GiB drive in 9 minutes and 5.9 GB per run, 34 s here;
the CMT shrinks with it (512 KiB for 4 MB) so it covers the same 0.75 % of the logical pages.
Every run preconditions the drive to 90 % occupancy (`Initial_Occupancy_Percentage`, which also
warms MQSim's CMT with the flows' addresses) and runs 200 ms of simulated time. "Alone" is the
same XML with one flow.

    python validation/paper_setups.py                    # all three studies (about 10 minutes)
    python validation/paper_setups.py --studies cmt      # one of backend, cmt, write-cache

Outputs go under results/paper_setups/ (each run's XML pair and outputs, and table.json).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import vs_mqsim
from ssdlab.api import fairness_metrics

OUT = vs_mqsim.ROOT / "results" / "paper_setups"
SIMULATORS = ("mqsim", "ssdlab-compat", "ssdlab-default")
PAGE_SECTORS = 16  # 8 KiB pages of 512 B sectors
STOP_NS = 200_000_000
OCCUPANCY_PERCENT = 90
BLOCKS_PER_PLANE = 256  # the paper's 2048 / 8
CMT_BYTES = 4 * 1024 * 1024 * BLOCKS_PER_PLANE // 2048
ALL_CHANNELS = "0,1,2,3,4,5,6,7"
CHANNELS_1_TO_4 = "0,1,2,3"
CHANNELS_5_TO_8 = "4,5,6,7"


@dataclass(frozen=True)
class Flow:
    """One synthetic flow of 8 KiB page-aligned requests at a fixed queue depth."""

    channels: str
    address: str
    queue_depth: int
    read: bool = True
    cache: str = "TURNED_OFF"
    # Initial_Occupancy_Percentage; 0 leaves the drive empty (MQSim's preconditioning off).
    occupancy: int = OCCUPANCY_PERCENT
    # ssdlab only: the share of requests placed at random (flows[].random_fraction); MQSim has
    # no partly random flow, so a point with one is not run there.
    random_fraction: float | None = None


@dataclass(frozen=True)
class Point:
    """One shared run of two flows (and each flow alone) on one device."""

    study: str
    label: str
    device: tuple[tuple[str, str], ...]
    flows: tuple[Flow, ...]


def device(*, ideal_map: bool, precondition: bool = True) -> tuple[tuple[str, str], ...]:
    changes = {
        "Enabled_Preconditioning": "true" if precondition else "false",
        "Block_No_Per_Plane": str(BLOCKS_PER_PLANE),
        "Ideal_Mapping_Table": "true" if ideal_map else "false",
        "CMT_Capacity": str(CMT_BYTES),
    }
    return tuple(changes.items())


def backend_points() -> list[Point]:
    flow1 = Flow(ALL_CHANNELS, "RANDOM_UNIFORM", 2)
    return [
        Point(
            "backend",
            f"Flow-2 QD {qd}",
            device(ideal_map=True),
            (flow1, replace(flow1, queue_depth=qd)),
        )
        for qd in (2, 16, 64, 256)
    ]


def cmt_points() -> list[Point]:
    flow1 = Flow(CHANNELS_1_TO_4, "STREAMING", 8)
    points = []
    for randomness in (0.0, 0.25, 0.5, 0.75, 1.0):
        if randomness == 0.0:
            flow2 = Flow(CHANNELS_5_TO_8, "STREAMING", 8)
        elif randomness == 1.0:
            flow2 = Flow(CHANNELS_5_TO_8, "RANDOM_UNIFORM", 8)
        else:
            flow2 = Flow(CHANNELS_5_TO_8, "RANDOM_UNIFORM", 8, random_fraction=randomness)
        label = f"Flow-2 {randomness:.0%} random"
        points.append(Point("cmt", label, device(ideal_map=False), (flow1, flow2)))
    return points


def write_cache_points() -> list[Point]:
    # An empty drive: writes need no data in place, and MQSim @7ec40e3 stalls and then fails
    # when write-cached flows start on a preconditioned drive (72 requests issued in 200 ms).
    flow1 = Flow(CHANNELS_1_TO_4, "RANDOM_UNIFORM", 8, read=False, cache="WRITE_CACHE", occupancy=0)
    return [
        Point(
            "write-cache",
            f"Flow-2 QD {qd}",
            device(ideal_map=True, precondition=False),
            (flow1, replace(flow1, channels=CHANNELS_5_TO_8, queue_depth=qd)),
        )
        for qd in (8, 32, 128, 256)
    ]


STUDIES = {"backend": backend_points, "cmt": cmt_points, "write-cache": write_cache_points}
PAPER = {
    "backend": "Flow-1 slows down 14.4x at Flow-2 QD 256; Flow-2 barely slows down",
    "cmt": "Flow-1 slows down 2.1x when Flow-2 is fully random",
    "write-cache": "over 50 % of the weighted speedup lost (WS below 1 of 2)",
}


def flow_xml(flow: Flow, seed: int) -> str:
    return vs_mqsim.synthetic_flow_xml(
        {
            "Priority_Class": "HIGH",
            "Device_Level_Data_Caching_Mode": flow.cache,
            "Channel_IDs": flow.channels,
            "Chip_IDs": "0,1,2,3",
            "Die_IDs": "0,1",
            "Plane_IDs": "0,1",
            "Initial_Occupancy_Percentage": str(flow.occupancy),
            "Working_Set_Percentage": "100",
            "Synthetic_Generator_Type": "QUEUE_DEPTH",
            "Read_Percentage": "100" if flow.read else "0",
            "Address_Distribution": flow.address,
            "Percentage_of_Hot_Region": "0",
            "Generated_Aligned_Addresses": "true",
            "Address_Alignment_Unit": str(PAGE_SECTORS),
            "Request_Size_Distribution": "FIXED",
            "Average_Request_Size": str(PAGE_SECTORS),
            "Variance_Request_Size": "0",
            "Seed": str(seed),
            "Average_No_of_Reqs_in_Queue": str(flow.queue_depth),
            "Intensity": "32768",
            "Stop_Time": str(STOP_NS),
            "Total_Requests_To_Generate": "0",
        }
    )


@dataclass(frozen=True)
class Run:
    """One simulator on one device with some flows (each with the seed of its place in the
    shared run, so alone it issues the same requests)."""

    simulator: str
    device: tuple[tuple[str, str], ...]
    flows: tuple[tuple[Flow, int], ...]

    def key(self) -> str:
        # A flow at the usual occupancy leaves the field out: the keys (and MQSim's stored
        # outputs) from before the field existed stay valid.
        flows = [
            ({k: v for k, v in asdict(f).items() if k != "occupancy" or v != OCCUPANCY_PERCENT}, s)
            for f, s in self.flows
        ]
        text = json.dumps([self.simulator, self.device, flows])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def runnable(self) -> bool:
        return self.simulator != "mqsim" or all(f.random_fraction is None for f, _ in self.flows)


def execute(run: Run, source: Path, mqsim: Path, out: Path) -> list[dict[str, float]]:
    """Runs one simulator on one XML pair; per flow: requests and mean latency (us)."""
    folder = out / "runs" / f"{run.simulator}-{run.key()}"
    mqsim_output = folder / "workload_scenario_1.xml"
    if run.simulator == "mqsim" and mqsim_output.exists():
        # MQSim is pinned at 7ec40e3 and the key covers the whole XML pair: its earlier output
        # stands (30 s or more per run). ssdlab always runs: its code changes.
        return vs_mqsim.mqsim_flows(mqsim_output)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "ssdconfig.xml").write_text(vs_mqsim.changed_device_xml(source, dict(run.device)))
    flows = [flow_xml(f, seed) for f, seed in run.flows]
    (folder / "workload.xml").write_text(vs_mqsim.scenario_xml(flows))
    if run.simulator == "mqsim":
        vs_mqsim.run_measured([str(mqsim), "-i", "ssdconfig.xml", "-w", "workload.xml"], folder)
        return vs_mqsim.mqsim_flows(mqsim_output)
    command = [sys.executable, "-m", "ssdlab", "run", "ssdconfig.xml", "workload.xml"]
    command += ["--out", "ssdlab"]
    if run.simulator == "ssdlab-compat":
        command += ["--set", 'compat="mqsim"']
    for i, (f, _) in enumerate(run.flows):
        if f.random_fraction is not None:
            command += ["--set", f"flows.{i}.random_fraction={f.random_fraction}"]
    vs_mqsim.run_measured(command, folder)
    return vs_mqsim.ssdlab_flows(folder / "ssdlab" / "scenario-1" / "results.json")


def runs_of(point: Point, simulator: str) -> tuple[Run, list[Run]]:
    """The shared run of a point and each flow's alone run."""
    seeded = tuple((f, i + 1) for i, f in enumerate(point.flows))
    shared = Run(simulator, point.device, seeded)
    return shared, [Run(simulator, point.device, (pair,)) for pair in seeded]


def metrics(shared: list[dict[str, float]], alone: list[list[dict[str, float]]]) -> dict:
    """Slowdowns, fairness and weighted speedup from mean response times, by the one formula
    of the API (`ssdlab.api.fairness_metrics`)."""
    names = [f"flow-{i + 1}" for i in range(len(shared))]
    result, _ = fairness_metrics(
        names,
        {n: s["mean_us"] for n, s in zip(names, shared, strict=True)},
        {n: a[0]["mean_us"] for n, a in zip(names, alone, strict=True)},
    )
    return {
        "slowdowns": [round(result.slowdown.get(n, float("nan")), 3) for n in names],
        "fairness": round(result.fairness, 3),
        "weighted_speedup": round(result.weighted_speedup, 3),
        "shared_mean_us": [round(s["mean_us"], 1) for s in shared],
        "alone_mean_us": [round(a[0]["mean_us"], 1) for a in alone],
        "shared_requests": [s["requests"] for s in shared],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", default=",".join(STUDIES))
    parser.add_argument("--simulators", default=",".join(SIMULATORS))
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    studies = [s for s in args.studies.split(",") if s]
    simulators = [s for s in args.simulators.split(",") if s]
    if unknown := [s for s in studies if s not in STUDIES]:
        sys.exit(f"--studies: unknown {', '.join(unknown)}; expected {', '.join(STUDIES)}")
    if unknown := [s for s in simulators if s not in SIMULATORS]:
        sys.exit(f"--simulators: unknown {', '.join(unknown)}; expected {', '.join(SIMULATORS)}")
    source = vs_mqsim.mqsim_source()
    if source is None:
        sys.exit("MQSim's source is not here: set SSDLAB_MQSIM_SOURCE to ../shared/mqsim")
    mqsim = vs_mqsim.build_mqsim(source) if "mqsim" in simulators else Path("/nonexistent")

    points = [p for s in studies for p in STUDIES[s]()]
    wanted: dict[str, Run] = {}
    for point in points:
        for simulator in simulators:
            shared, alone = runs_of(point, simulator)
            for run in (shared, *alone):
                if run.runnable():
                    wanted[run.key()] = run
    # MQSim's runs first: they take 30-40 s each, ssdlab's about 1 s.
    order = sorted(wanted.values(), key=lambda r: r.simulator != "mqsim")
    print(f"{len(order)} runs", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {r.key(): pool.submit(execute, r, source, mqsim, args.out) for r in order}
        measured = {}
        for n, (key, future) in enumerate(futures.items(), start=1):
            measured[key] = future.result()
            print(f"  [{n}/{len(order)}] {wanted[key].simulator} {key}", file=sys.stderr)

    table = []
    for point in points:
        row: dict = {"study": point.study, "point": point.label, "paper": PAPER[point.study]}
        for simulator in simulators:
            shared, alone = runs_of(point, simulator)
            if not shared.runnable():
                row[simulator] = None
                continue
            row[simulator] = metrics(measured[shared.key()], [measured[a.key()] for a in alone])
        table.append(row)
    print_tables(table, simulators)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.json").write_text(json.dumps(table, indent=2) + "\n")
    print(f"wrote {args.out / 'table.json'}")
    return 0


def print_tables(table: list[dict], simulators: list[str]) -> None:
    """One Markdown table per study: S1, S2, fairness and WS from each simulator."""
    for study in dict.fromkeys(r["study"] for r in table):
        rows = [r for r in table if r["study"] == study]
        print(f"\n{study}: paper: {rows[0]['paper']}\n")
        headers = ["point"]
        for sim in simulators:
            headers += [f"{sim} S1", "S2", "F", "WS"]
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---:" for _ in headers) + "|")
        for r in rows:
            cells = [r["point"]]
            for sim in simulators:
                m = r[sim]
                if m is None:
                    cells += ["-"] * 4
                else:
                    s1, s2 = m["slowdowns"]
                    cells += [f"{s1:.2f}", f"{s2:.2f}", f"{m['fairness']:.2f}"]
                    cells.append(f"{m['weighted_speedup']:.2f}")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
