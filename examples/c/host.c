/* A host in C driving the simulated SSD through the stepping API (docs/embedding.md): the
 * shape of a full-system simulator's device model. Build and run from the repository root:
 *
 *   cargo build --release -p ssdlab-capi
 *   cc -O2 -Icrates/ssdlab-capi/include examples/c/host.c target/release/libssdlab.a \
 *      -lpthread -ldl -lm -o /tmp/ssdlab-host && /tmp/ssdlab-host
 *
 * It writes a pattern with its own bytes, reads it back through the device, flushes, trims,
 * shows that a bad request is refused with a message, and prints each request's latency. The
 * clock loop is what a gem5 / SST / QEMU device model does on its tick: advance the device to
 * the host's time, then collect what completed. Exit status 0 when every check held. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ssdlab.h"

static const char *CONFIG =
    "seed = 1\n"
    "[flash]\nchannels = 2\nchips_per_channel = 2\ndies_per_chip = 1\nplanes_per_die = 2\n"
    "blocks_per_plane = 64\npages_per_block = 64\npage_size = \"4KiB\"\n"
    "[ftl]\nover_provisioning = 0.2\n"
    "[cache]\ncapacity = \"1MiB\"\n"
    "[data]\nemulate = true\n"
    "[[flows]]\nname = \"nvme-sq1\"\nkind = \"host\"\ncache_mode = \"write\"\n";

#define CHECK(cond, ...)                                            \
    do {                                                            \
        if (!(cond)) {                                              \
            fprintf(stderr, "FAILED: " __VA_ARGS__);                \
            fprintf(stderr, " (%s)\n", ssdlab_last_error());        \
            return 1;                                               \
        }                                                           \
    } while (0)

static uint8_t read_back[64 * 512];

/* Advances the device in host-clock ticks of `tick_ps` until `want` completions have come. */
static int run_until(SsdlabDevice *dev, int want, uint64_t tick_ps) {
    int seen = 0;
    while (seen < want) {
        uint64_t next;
        if (ssdlab_next_event_time(dev, &next) == 0) break; /* idle */
        uint64_t now = ssdlab_now_ps(dev);
        if (ssdlab_advance_to(dev, now + tick_ps) != SSDLAB_OK) return -1;
        SsdlabCompletion c;
        int got;
        while ((got = ssdlab_poll_completion(dev, &c, read_back, sizeof read_back)) == 1) {
            printf("  id %" PRIu64 " op %u status %u latency %.2f us (cell %.2f us)\n", c.id, (unsigned)c.op,
                   (unsigned)c.status, (c.completed_ps - c.submitted_ps) / 1e6, c.breakdown_ps[7] / 1e6);
            seen++;
        }
        if (got < 0) return -1;
    }
    return seen;
}

int main(void) {
    SsdlabDevice *dev = NULL;
    CHECK(ssdlab_device_new(CONFIG, NULL, &dev) == SSDLAB_OK, "device_new");
    printf("device: %" PRIu64 " logical sectors\n", ssdlab_logical_sectors(dev));

    uint8_t pattern[64 * 512];
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(i * 7 + 3);
    SsdlabRequest write = {.id = 1, .queue = 0, .op = SSDLAB_WRITE, .start_sector = 4096, .sectors = 64,
                           .data = pattern, .data_len = sizeof pattern};
    CHECK(ssdlab_submit(dev, &write) == SSDLAB_OK, "submit write");
    CHECK(run_until(dev, 1, 1000000) == 1, "write completion"); /* 1 us ticks */

    SsdlabRequest read = {.id = 2, .op = SSDLAB_READ, .start_sector = 4096, .sectors = 64};
    CHECK(ssdlab_submit(dev, &read) == SSDLAB_OK, "submit read");
    memset(read_back, 0, sizeof read_back);
    CHECK(run_until(dev, 1, 1000000) == 1, "read completion");
    CHECK(memcmp(read_back, pattern, sizeof pattern) == 0, "read returned other bytes than written");

    SsdlabRequest flush = {.id = 3, .op = SSDLAB_FLUSH};
    CHECK(ssdlab_submit(dev, &flush) == SSDLAB_OK, "submit flush");
    CHECK(run_until(dev, 1, 10000000) == 1, "flush completion");

    SsdlabRequest trim = {.id = 4, .op = SSDLAB_TRIM, .start_sector = 4096, .sectors = 64};
    CHECK(ssdlab_submit(dev, &trim) == SSDLAB_OK, "submit trim");
    read.id = 5;
    CHECK(ssdlab_submit(dev, &read) == SSDLAB_OK, "submit read after trim");
    CHECK(run_until(dev, 2, 1000000) == 2, "trim and read completions");
    for (size_t i = 0; i < sizeof read_back; i++) CHECK(read_back[i] == 0, "trimmed sector %zu not zero", i / 512);

    SsdlabRequest bad = {.id = 6, .op = SSDLAB_READ, .start_sector = ssdlab_logical_sectors(dev), .sectors = 8};
    CHECK(ssdlab_submit(dev, &bad) == SSDLAB_REQUEST_REFUSED, "an out-of-range read must be refused");
    printf("refused as expected: %s\n", ssdlab_last_error());
    SsdlabDevice *none = NULL;
    CHECK(ssdlab_device_new("[flash]\nchannels = 0\n", NULL, &none) == SSDLAB_CONFIG_ERROR, "bad config accepted");
    printf("bad config: %s\n", ssdlab_last_error());

    size_t needed = 0;
    CHECK(ssdlab_results_json(dev, NULL, 0, &needed) == SSDLAB_BUFFER_TOO_SMALL && needed > 100, "results size");
    char *json = malloc(needed);
    CHECK(ssdlab_results_json(dev, json, needed, &needed) == SSDLAB_OK, "results");
    CHECK(strstr(json, "\"schema\": \"ssdlab.results/1\"") != NULL, "results schema");
    free(json);
    printf("simulated %.3f us; results.json %zu bytes\nok\n", ssdlab_now_ps(dev) / 1e6, needed);
    ssdlab_device_free(dev);
    return 0;
}
