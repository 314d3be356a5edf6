"""A host written in Python that trace replay cannot express: a closed-loop application with
think time, and a small LRU page cache in front of the simulated SSD (docs/embedding.md).

Each of `--threads` application threads loops: think for `--think-us`, then touch a 4 KiB page
(80 % of touches go to the hottest 20 % of pages). A page-cache hit costs nothing; a miss reads
the page from the device, and the thread waits for it. Every `--write-every`-th touch dirties
the page; a dirty page evicted from the cache is written back. The next request depends on when
the last one completed and on what the cache holds, so no trace recorded beforehand can replay
it. Run from the repository root:

    .venv/bin/python examples/hosts/closed_loop_app.py --touches 20000
"""

from __future__ import annotations

import argparse
import heapq
import random
from collections import OrderedDict

import ssdlab

PAGE_SECTORS = 8  # 4 KiB pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config",
        default="examples/mqsim-default.toml",
        help="the device (its flows are replaced)",
    )
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--think-us", type=float, default=20.0)
    parser.add_argument("--touches", type=int, default=20_000, help="page touches in all")
    parser.add_argument(
        "--cache-pages", type=int, default=8192, help="pages the host's page cache holds"
    )
    parser.add_argument(
        "--pages", type=int, default=1 << 16, help="pages the application addresses"
    )
    parser.add_argument(
        "--write-every", type=int, default=4, help="every n-th touch dirties its page"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    config = ssdlab.load_config(args.config)
    config["flows"] = [{"name": "app", "kind": "host"}]
    config.setdefault("precondition", {})["mode"] = "fill"
    dev = ssdlab.Device(config, base_dir=".")
    rng = random.Random(args.seed)
    think_ps = int(args.think_us * ssdlab.device.PS_PER_US)
    cache: OrderedDict[int, bool] = OrderedDict()  # page -> dirty, least recently used first
    hits = misses = writebacks = 0
    # (time the thread is ready to touch its next page, thread); a thread waiting for a read
    # is in `waiting` under the request's id instead.
    ready = [(rng.randrange(think_ps + 1), t) for t in range(args.threads)]
    heapq.heapify(ready)
    waiting: dict[int, tuple[int, int]] = {}  # read id -> (thread, page)
    touches = 0

    def hot_page() -> int:
        hot = args.pages // 5
        return rng.randrange(hot) if rng.random() < 0.8 else hot + rng.randrange(args.pages - hot)

    def insert(page: int, dirty: bool) -> None:
        nonlocal writebacks
        cache[page] = dirty
        cache.move_to_end(page)
        if len(cache) > args.cache_pages:
            victim, was_dirty = cache.popitem(last=False)
            if was_dirty:
                writebacks += 1
                dev.submit("write", victim * PAGE_SECTORS, PAGE_SECTORS)

    while touches < args.touches or waiting:
        next_ready = ready[0][0] if ready and touches < args.touches else None
        next_event = dev.next_event_time()
        if next_ready is not None and (next_event is None or next_ready <= next_event):
            at, thread = heapq.heappop(ready)
            dev.advance_to(at)
            touches += 1
            page = hot_page()
            dirty = touches % args.write_every == 0
            if page in cache:
                hits += 1
                cache[page] = cache[page] or dirty
                cache.move_to_end(page)
                heapq.heappush(ready, (at + think_ps, thread))
            else:
                misses += 1
                rid = dev.submit("read", page * PAGE_SECTORS, PAGE_SECTORS)
                waiting[rid] = (thread, page if not dirty else -page - 1)
            continue
        if next_event is None:
            break
        dev.advance_to(next_event)
        for c in dev.completions():
            if c.id in waiting:
                thread, page = waiting.pop(c.id)
                insert(page if page >= 0 else -page - 1, page < 0)
                heapq.heappush(ready, (c.completed_ps + think_ps, thread))
    dev.run_until_idle()
    results = dev.results()
    seconds = dev.now_seconds
    print(f"{touches} touches by {args.threads} threads in {seconds * 1e3:.2f} ms simulated")
    hit_rate = hits / max(touches, 1)
    print(f"page cache: {hit_rate:.1%} hits, {misses} device reads, {writebacks} write-backs")
    print(f"application: {touches / seconds:,.0f} touches/s")
    reads = results.device.reads
    latency = reads.latency_us
    print(f"device reads: {reads.count}, mean {latency.mean:.1f} us, p99 {latency.p99:.1f} us")


if __name__ == "__main__":
    main()
