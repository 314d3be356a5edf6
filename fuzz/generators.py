"""Input generators of the fuzz suite: random feature combinations, hostile config mutations and
damaged traces.

Each generator takes a `random.Random` and returns plain data, so the same code serves the
Hypothesis tests (which hand it a `st.randoms()` instance they can replay and shrink) and the long
campaign of `make fuzz` (which seeds one `Random` per input, so an input is rebuilt from its
number alone).

The space is the one issue 12's fuzzing explored: small devices (a run takes well under a
second) with every model the simulator has (mapping families, cache organisations and
read-ahead, the banked DRAM, firmware cores, power, the four host interfaces, the schedulers,
suspension, GC and wear-leveling policies), several flows with their own cache modes, and data
emulation on, so that every read is checked against the last write.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

PAGE_SIZES_KIB = [4, 8, 16]
GC_POLICIES = ["greedy", "random", "random-p", "random-pp", "rga", "fifo", "cost-benefit"]
SCHEDULERS = ["fifo", "out-of-order", "priority", "flow-fair"]
INTERFACES = ["nvme", "nvme", "sata", "ufs", "open_channel"]
MAPPINGS = ["page", "page", "block", "hybrid", "super_page"]
CACHE_MODES = ["write", "read", "write-read", "off"]
PRIORITIES = ["urgent", "high", "medium", "low"]


def _pick(rng: random.Random, values: list[Any]) -> Any:
    return values[rng.randrange(len(values))]


def data_config(rng: random.Random) -> dict[str, Any]:
    """A random small device, feature combination and workload with data emulation on.

    Sized so that a run takes tens to hundreds of milliseconds, with enough writes (relative to
    the logical space) to drive GC, merges and wear leveling, and enough overlap between flows'
    addresses that reads meet writes in every cache and queue.
    """
    page_kib = _pick(rng, PAGE_SIZES_KIB)
    mapping = _pick(rng, MAPPINGS)
    interface = _pick(rng, INTERFACES)
    if interface == "open_channel":
        mapping = "page"  # the host FTL maps pages; other families are a config error there
    flash: dict[str, Any] = {
        "channels": rng.randint(1, 4),
        "chips_per_channel": rng.randint(1, 2),
        "dies_per_chip": rng.randint(1, 2),
        "planes_per_die": _pick(rng, [1, 2, 2, 4]),
        "blocks_per_plane": _pick(rng, [16, 24, 32, 64]),
        "pages_per_block": _pick(rng, [8, 16, 32, 64]),
        "page_size": f"{page_kib}KiB",
        "technology": _pick(rng, ["SLC", "MLC", "TLC", "QLC"]),
        "suspension": _pick(rng, ["none", "program", "erase", "program-erase"]),
        "timing": {"read": "20us", "program": "200us", "erase": "1ms"},
    }
    if rng.random() < 0.2 and flash["pages_per_block"] >= 16:
        flash["page_type_layout"] = "address"
    ftl: dict[str, Any] = {
        "mapping": mapping,
        "over_provisioning": round(rng.uniform(0.3, 0.5), 2),
        "gc_policy": _pick(rng, GC_POLICIES),
        "ideal_mapping": rng.random() < 0.5,
        "cmt_capacity": _pick(rng, ["16KiB", "64KiB", "2MiB"]),
        "copyback": rng.random() < 0.3 and interface != "open_channel",
        "dynamic_wear_leveling": rng.random() < 0.5,
        "static_wear_leveling": rng.random() < 0.5,
        "static_wear_leveling_threshold": rng.randint(2, 20),
        "preemptible_gc": rng.random() < 0.3 and mapping == "page",
        "allocation": "".join(rng.sample("CWDP", 4)),
        "address_domains": _pick(rng, ["shared", "shared", "per-flow"]),
    }
    if mapping == "super_page":
        ftl["super_page_update"] = _pick(rng, ["read-modify-write", "remap"])
    if mapping == "hybrid":
        ftl["log_blocks_per_data_block"] = rng.randint(1, 8)
    cache: dict[str, Any] = {
        "capacity": _pick(rng, ["64KiB", "256KiB", "1MiB", "4MiB"]),
        "replacement": _pick(rng, ["lru", "fifo", "random"]),
        "sharing": _pick(rng, ["shared", "partitioned"]),
    }
    organisation = _pick(rng, ["fully_associative", "set_associative", "direct_mapped"])
    cache["organisation"] = organisation
    if organisation == "set_associative":
        cache["ways"] = _pick(rng, [2, 4, 8])
    if rng.random() < 0.3:
        cache["line_size"] = f"{page_kib * _pick(rng, [1, 2])}KiB"
    if rng.random() < 0.4:
        cache["read_ahead"] = True
    config: dict[str, Any] = {
        "seed": rng.randrange(1, 2**31),
        "host": {"interface": interface},
        "controller": {"scheduling": _pick(rng, SCHEDULERS)},
        "flash": flash,
        "ftl": ftl,
        "cache": cache,
        "precondition": _precondition(rng, mapping),
        "data": {"emulate": True, "memory_limit": _pick(rng, ["1MiB", "64MiB"])},
        "run": {"stall_timeout": "10s"},
        "dram": {"model": _pick(rng, ["serial", "banked"])},
        "flows": [_flow(rng, i) for i in range(rng.randint(1, 3))],
    }
    if cache.get("read_ahead") and all(
        f["cache_mode"] in ("write", "off") for f in config["flows"]
    ):
        config["flows"][0]["cache_mode"] = "read"
    if config["dram"]["model"] == "banked":
        config["dram"]["page_policy"] = _pick(rng, ["open-page", "close-page"])
    # Issue 17's models: FDP handles per flow, an SLC cache that folds, read retries with reclaim.
    if mapping == "page" and interface != "open_channel" and rng.random() < 0.3:
        # Each handle past the first keeps two more blocks open per plane: draw only as many
        # as the spare blocks hold (beside GC's reserve, two open blocks, and a block's margin
        # for translation pages), as validation asks.
        blocks = flash["blocks_per_plane"]
        data_blocks = math.ceil(blocks * (1 - ftl["over_provisioning"]))
        spare = blocks - data_blocks - max(2, math.ceil(0.05 * blocks)) - 2 - 1
        handles = rng.randint(1, max(1, min(4, 1 + spare // 2)))
        ftl["fdp"] = {"reclaim_unit_handles": handles}
        for flow in config["flows"]:
            flow["placement_handle"] = rng.randrange(handles)
    if flash["technology"] in ("MLC", "QLC") and rng.random() < 0.3:
        flash["slc_cache"] = {
            "blocks_per_plane": rng.randint(1, 4),
            "fold_threshold": _pick(rng, [0.5, 0.75, 1.0]),
        }
    if rng.random() < 0.3:
        flash["reliability"] = {
            "pe_cycles_at_start": _pick(rng, [0, 3000, 8000]),
            "data_age_days_at_start": _pick(rng, [0, 30, 60]),
            # Read reclaim is page-mapped GC's (a config error with the block-mapped families).
            "read_reclaim_bits": _pick(rng, [0, 10, 32]) if mapping == "page" else 0,
        }
    if mapping == "page" and interface != "open_channel" and rng.random() < 0.25:
        _make_zoned(rng, config)
    # Issue 18's 3-byte in-plane map addresses, where static allocation over the whole device
    # places every page (the results must be those of the global tables).
    in_plane_applies = (
        mapping == "page"
        and interface != "open_channel"
        and "zns" not in config
        and ftl["address_domains"] == "shared"
    )
    if in_plane_applies and rng.random() < 0.4:
        ftl["map_addresses"] = "in-plane"
    if rng.random() < 0.3:
        config["firmware"] = {"enabled": True, "cores": rng.randint(1, 4)}
    if rng.random() < 0.2:
        config["power"] = {"enabled": True}
    return config


def _make_zoned(rng: random.Random, config: dict[str, Any]) -> None:
    """Issue 17's zoned namespaces: zone writers (writes or appends) with resets, on a zoned
    namespace alone or beside a conventional one (``[[namespaces]]``)."""
    flash, ftl = config["flash"], config["ftl"]
    planes = (flash["channels"] * flash["chips_per_channel"] * flash["dies_per_chip"]) * flash[
        "planes_per_die"
    ]
    zone_planes = _pick(rng, [d for d in (1, 2, planes) if planes % d == 0])
    config["zns"] = {
        "zone_planes": zone_planes,
        "max_open_zones": 4,
        "max_active_zones": 4,
        "finish_pads": rng.random() < 0.7,
    }
    config["precondition"] = {"mode": "none"}
    ftl.pop("fdp", None)
    ftl["address_domains"] = "shared"
    flash.pop("slc_cache", None)
    if "reliability" in flash:
        flash["reliability"]["read_reclaim_bits"] = 0
    flows = config["flows"]
    for flow in flows:
        flow.pop("placement_handle", None)
    zoned = flows if rng.random() < 0.6 else flows[:1]
    # Each writer owns its own zones (writers sharing zones break each other's write pointers:
    # a host error the zones refuse, not what this campaign looks for).
    for i, flow in enumerate(zoned):
        flow["address"] = "zoned"
        if rng.random() < 0.3:
            # An LSM store: two levels, each with its own open zone; files of a few pages.
            flow["lsm"] = {
                "levels": 2,
                "l0_files": rng.randint(1, 3),
                "fanout": rng.randint(2, 3),
            }
        else:
            flow["open_zones"] = rng.randint(1, 2)
            flow["zone_append"] = rng.random() < 0.4
        for key in ("hot_fraction", "hot_traffic", "working_set", "alignment"):
            flow.pop(key, None)
        if len(zoned) > 1:
            flow["working_set"] = round(1 / len(zoned) - 0.001, 3)
            flow["working_set_start"] = round(i / len(zoned), 3)
    config["zns"]["max_open_zones"] = config["zns"]["max_active_zones"] = 2 * len(zoned)
    if len(zoned) < len(flows):
        # A conventional namespace beside the zoned one for the other flows.
        page = int(flash["page_size"].removesuffix("KiB")) * 1024
        blocks, ppb = flash["blocks_per_plane"], flash["pages_per_block"]
        conventional = planes * ppb * max(1, blocks // 8) * page
        config["namespaces"] = [
            {"name": "zoned", "command_set": "zoned", "zones": 4},
            {"name": "conv", "size": f"{conventional}B"},
        ]
        for flow in flows:
            flow["namespace"] = "zoned" if flow in zoned else "conv"


def _precondition(rng: random.Random, mapping: str) -> dict[str, Any]:
    modes = ["none", "none", "fill"] + (["steady"] if mapping == "page" else [])
    mode = _pick(rng, modes)
    if mode == "none":
        return {"mode": "none"}
    section: dict[str, Any] = {"mode": mode, "occupancy": round(rng.uniform(0.2, 0.8), 2)}
    if mode == "fill" and mapping == "page":  # the aged layout is page mapping's alone
        section["layout"] = _pick(rng, ["packed", "spread"])
    return section


def _flow(rng: random.Random, index: int) -> dict[str, Any]:
    flow: dict[str, Any] = {
        "name": f"f{index}",
        "requests": _pick(rng, [200, 500, 1000, 2000]),
        "queue_depth": _pick(rng, [1, 2, 4, 8, 16, 32]),
        "cache_mode": _pick(rng, CACHE_MODES),
        "priority": _pick(rng, PRIORITIES),
        "read_fraction": _pick(rng, [0.0, 0.3, 0.5, 0.7, 1.0]),
        "alignment": _pick(rng, ["512B", "4KiB"]),
    }
    size = rng.random()
    if size < 0.4:
        flow["request_size"] = _pick(rng, ["512B", "4KiB", "8KiB", "16KiB", "64KiB"])
    elif size < 0.7:
        flow["request_size"] = {"mean": "8KiB", "stdev": _pick(rng, ["2KiB", "6KiB"])}
    address = _pick(rng, ["uniform", "hotcold", "sequential"])
    flow["address"] = address
    if address == "hotcold":
        flow["hot_fraction"] = _pick(rng, [0.1, 0.2])
        flow["hot_traffic"] = _pick(rng, [0.8, 0.9])
    if rng.random() < 0.6:
        flow["working_set"] = _pick(rng, [0.05, 0.1, 0.5])
    return flow


# ---------------------------------------------------------------------------------------------
# Hostile mutations of a valid config: the values a user (or a script gone wrong) might write.

HOSTILE_VALUES: list[Any] = [
    0,
    -1,
    1,
    2**31 - 1,
    2**32 - 1,
    2**32,
    2**40,
    2**63 - 1,
    -(2**63),
    0.0,
    -0.5,
    1.5,
    1e-300,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    "",
    " ",
    "x",
    "1",
    "0B",
    "1e-9T/s",
    "1e30/s",
    "0ns",
    "-1us",
    "18446744073709551616B",
    "9999999999999999999999ms",
    "1e-9B/s",
    "1e-9Hz",
    "nanKiB",
    "4 KiB",
    "4kib",
    "\x00",
    "é",
    [],
    [1, 2],
    ["a"],
    {},
    {"x": 1},
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a config document (tables, list items and leaves)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def mutate_config(rng: random.Random, base: dict[str, Any], mutations: int = 0) -> dict[str, Any]:
    """`base` with one to three hostile changes: a value replaced by a hostile one, a key
    deleted, an unknown key added, or a table replaced by a list or a scalar."""
    doc = copy.deepcopy(base)
    for _ in range(mutations or rng.randint(1, 3)):
        paths = _paths(doc)
        if not paths:
            break
        path = _pick(rng, paths)
        action = rng.random()
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        if action < 0.65:
            _set(doc, path, copy.deepcopy(_pick(rng, HOSTILE_VALUES)))
        elif action < 0.8 and isinstance(parent, dict):
            del parent[path[-1]]
        elif action < 0.9 and isinstance(parent, dict):
            parent[_pick(rng, ["chanels", "extra", "Channels", "queue-depth", ""])] = 1
        else:
            _set(doc, path, _pick(rng, [[1, 2], 3, "table", [{"a": 1}]]))
    return doc


# ---------------------------------------------------------------------------------------------
# Damaged traces: a valid trace of each format, then lines and bytes broken the way files break.

TRACE_SAMPLES: dict[str, list[str]] = {
    "mqsim": [
        "0 0 100 8 1",
        "1000 0 200 8 0",
        "2000 0 300 16 1",
        "3500 0 100 8 0",
    ],
    "msr": [
        "128166372003061629,hm,0,Read,3154416640,4096,2022",
        "128166372016382155,hm,0,Write,3154416640,8192,2022",
        "128166372026382245,hm,0,Read,4096,4096,2022",
        "128166372036382245,hm,0,Write,8192,4096,2022",
    ],
    "spc": [
        "0,20941264,8192,W,0.551706",
        "0,20939840,8192,W,0.554041",
        "1,3436288,4096,R,0.559176",
        "0,20939848,4096,R,0.561000",
    ],
    "blkparse": [
        "  8,0    3        1     0.000000000   697  D   W 223490 + 8 [kworker]",
        "  8,0    3        2     0.000100000   697  D   R 223500 + 16 [fio]",
        "  8,0    3        3     0.000200000   697  D   W 1000 + 8 [fio]",
        "  8,0    3        4     0.000300000   697  D   R 1000 + 8 [fio]",
    ],
    "fio": [
        "fio version 3 iolog",
        "0 /dev/sdb add",
        "0 /dev/sdb open",
        "10 /dev/sdb write 0 4096",
        "20 /dev/sdb read 0 4096",
        "30 /dev/sdb write 8192 8192",
        "40 /dev/sdb close",
    ],
}

LINE_DAMAGE = [
    "",
    "#",
    "\ufeff",
    "\x00\x00\x00",
    "nan nan nan nan nan",
    "-1 0 -5 -8 1",
    "99999999999999999999999999 0 1 8 1",
    "1e400,hm,0,Read,0,4096,1",
    "0,0,0,X,0",
    "garbage line",
    "\t\t",
    "\u2028",
]


def trace_text(rng: random.Random, fmt: str) -> str:
    """A sample trace of `fmt` with one to four damages: lines dropped, duplicated, swapped,
    truncated, replaced by garbage, fields swapped, bytes flipped, or the whole file emptied."""
    lines = list(TRACE_SAMPLES[fmt])
    for _ in range(rng.randint(1, 4)):
        action = rng.randrange(9)
        i = rng.randrange(len(lines)) if lines else 0
        if action == 0 and lines:
            del lines[i]
        elif action == 1 and lines:
            lines.insert(i, lines[i])
        elif action == 2 and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif action == 3 and lines:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif action == 4:
            lines.insert(i, _pick(rng, LINE_DAMAGE))
        elif action == 5 and lines:
            fields = lines[i].replace(",", " ").split()
            rng.shuffle(fields)
            sep = "," if "," in lines[i] else " "
            lines[i] = sep.join(fields)
        elif action == 6 and lines:
            text = list(lines[i])
            if text:
                text[rng.randrange(len(text))] = chr(rng.randrange(32, 0x3000))
            lines[i] = "".join(text)
        elif action == 7:
            lines = []
        elif action == 8 and lines:
            fields = lines[i].split(",") if "," in lines[i] else lines[i].split()
            k = rng.randrange(len(fields)) if fields else 0
            if fields:
                fields[k] = _pick(rng, ["-1", "0", "1e30", "18446744073709551616", "x", ""])
            lines[i] = ("," if "," in lines[i] else " ").join(fields)
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


def trace_config(rng: random.Random, fmt: str, trace_path: str) -> dict[str, Any]:
    """A small device replaying `trace_path` in format `fmt` (or auto-detected), with data
    emulation so that replayed writes and reads are checked too."""
    flow: dict[str, Any] = {"kind": "trace", "path": trace_path}
    flow["format"] = fmt if rng.random() < 0.7 else "auto"
    if rng.random() < 0.3:
        flow["time_scale"] = _pick(rng, [0.5, 2.0, 1e-6, 1e6])
    return {
        "seed": rng.randrange(1, 2**31),
        "flash": {
            "channels": 2,
            "chips_per_channel": 1,
            "dies_per_chip": 1,
            "planes_per_die": 2,
            "blocks_per_plane": 64,
            "pages_per_block": 64,
            "page_size": "4KiB",
        },
        "ftl": {"over_provisioning": 0.2},
        "precondition": {"mode": "none"},
        "data": {"emulate": True},
        "run": {"max_simulated_time": "10s"},
        "flows": [flow],
    }
