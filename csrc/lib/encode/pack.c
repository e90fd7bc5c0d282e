/* A batch's ids laid out flat by the workers; see pack.h. */
#include "pack.h"

#include <string.h>

#include "../common/take_next.h"
#include "../common/workers.h"

/* Units per run a worker takes: enough that the shared counter is touched rarely, few
 * enough that the last runs spread over the workers. */
#define PACK_RUN 512

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LITTLE_ENDIAN_IDS 1
#else
#define LITTLE_ENDIAN_IDS 0
#endif

static inline void put(uint8_t *at, uint32_t value, int width) {
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
    if (width == 4) {
        at[2] = (uint8_t)(value >> 16);
        at[3] = (uint8_t)(value >> 24);
    }
}

static void pack_runs(void *arg) {
    fbpe_pack_job *job = (fbpe_pack_job *)arg;
    const fbpe_text_batch *batch = job->batch;
    const uint32_t *map = job->out_map;
    const int width = job->width;
    uint32_t widest = 0;
    for (;;) {
        size_t first = fbpe_take_next(&job->next) * PACK_RUN;
        if (first >= batch->num_units) break;
        size_t end = first + PACK_RUN < batch->num_units ? first + PACK_RUN : batch->num_units;
        for (size_t k = first; k < end; k++) {
            const fbpe_text_unit *u = &batch->units[k];
            uint8_t *at = job->dst + job->starts[k] * (size_t)width;
            const uint32_t *ids = u->count ? batch->outs[u->worker].ids + u->off : NULL;
            if (LITTLE_ENDIAN_IDS && width == 4 && !map) {
                /* Already the file's layout: one copy (widest matters for width 2 only). */
                if (u->count) memcpy(at, ids, u->count * sizeof(uint32_t));
                at += u->count * 4;
            } else {
                for (size_t j = 0; j < u->count; j++, at += width) {
                    uint32_t value = map ? map[ids[j]] : ids[j];
                    widest |= value;
                    put(at, value, width);
                }
            }
            if (job->last && job->last[k]) {
                widest |= job->eot;
                put(at, job->eot, width);
            }
        }
    }
#if defined(_MSC_VER)
    _InterlockedOr((volatile long *)&job->widest, (long)widest);
#else
    __atomic_fetch_or(&job->widest, widest, __ATOMIC_RELAXED);
#endif
}

void fbpe_pack_batch(fbpe_pack_job *job, size_t threads) {
    job->next = 0;
    job->widest = 0;
    fbpe_workers_run(threads, pack_runs, job);
}
