/* A text file encoded into a token file in one call; see file_encode.h. */
#include "file_encode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/take_next.h"
#include "../common/utf8.h"
#include "../common/workers.h"
#include "../scan/jsonl.h"
#include "../scan/scan.h"

#if defined(_WIN32)
/* No worker threads there (workers.c): the calling thread does all, and never waits. */
#include <io.h>
typedef int lock_t;
typedef int cond_t;
#define LOCK_INIT(m) ((void)(m))
#define LOCK_FREE(m) ((void)(m))
#define LOCK(m) ((void)(m))
#define UNLOCK(m) ((void)(m))
#define COND_INIT(c) ((void)(c))
#define COND_FREE(c) ((void)(c))
#define WAIT(c, m) ((void)(c), (void)(m))
#define BROADCAST(c) ((void)(c))
#define WRITE(fd, p, n) _write((fd), (p), (unsigned)((n) > 0x40000000 ? 0x40000000 : (n)))
#else
#include <pthread.h>
#include <unistd.h>
typedef pthread_mutex_t lock_t;
typedef pthread_cond_t cond_t;
#define LOCK_INIT(m) pthread_mutex_init((m), NULL)
#define LOCK_FREE(m) pthread_mutex_destroy(m)
#define LOCK(m) pthread_mutex_lock(m)
#define UNLOCK(m) pthread_mutex_unlock(m)
#define COND_INIT(c) pthread_cond_init((c), NULL)
#define COND_FREE(c) pthread_cond_destroy(c)
#define WAIT(c, m) pthread_cond_wait((c), (m))
#define BROADCAST(c) pthread_cond_broadcast(c)
/* At most 1 GiB a call: some systems refuse larger writes. */
#define WRITE(fd, p, n) write((fd), (p), (n) > ((size_t)1 << 30) ? ((size_t)1 << 30) : (n))
#endif

/* Slots of the ring per thread: a worker can run this many units ahead of the writer before
 * it waits, so that a slow unit (a paragraph of rare CJK) does not stop the others at once. */
#define SLOTS_PER_THREAD 4

size_t fbpe_file_units(const fbpe_file_job *job) {
    if (job->n == 0) return 1;
    return job->n / job->block + (job->n % job->block != 0);
}

/* ---- UTF-8 ----
 * The file is checked in pieces of `piece` bytes on all threads before any cut is looked for:
 * the cuts and the scanners read whole characters and assume valid text. A piece begins at
 * the first byte at or after its nominal start that is not a continuation byte (at most 4
 * on; the first piece at 0), so that each piece is checked from a character's start; with
 * valid bytes before it, the piece that holds the first bad byte reports exactly that byte, and any other reports
 * a later one or none, so the smallest report is the file's first bad byte. */
typedef struct {
    const uint8_t *data;
    size_t n, piece, pieces, next, bad;
} check_job;

static size_t piece_edge(const uint8_t *data, size_t n, size_t at) {
    if (at >= n) return n;
    size_t e = at;
    while (e < n && e < at + 4 && (data[e] & 0xC0) == 0x80) e++;
    return e;
}

/* *at = min(*at, value), by any number of threads at once. */
static void lower_to(size_t *at, size_t value) {
#if defined(_MSC_VER)
    if (value < *at) *at = value; /* one thread only there (workers.c) */
#else
    size_t seen = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (value < seen &&
           !__atomic_compare_exchange_n(at, &seen, value, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#endif
}

static void check_pieces(void *arg) {
    check_job *job = (check_job *)arg;
    for (;;) {
        size_t p = fbpe_take_next(&job->next);
        if (p >= job->pieces) break;
        size_t a = p == 0 ? 0 : piece_edge(job->data, job->n, p * job->piece);
        size_t b = p + 1 == job->pieces ? job->n : piece_edge(job->data, job->n, (p + 1) * job->piece);
        int incomplete;
        size_t bad = b > a ? fbpe_utf8_invalid(job->data + a, b - a, 0, &incomplete) : 0;
        if (b > a && bad < b - a) lower_to(&job->bad, a + bad);
    }
}

size_t fbpe_file_invalid(const uint8_t *data, size_t n, size_t piece, size_t threads) {
    if (piece < 4) piece = 4; /* a piece's start moves on at most 4 bytes, past the one before */
    check_job job = {data, n, piece, n / piece + (n % piece != 0), 0, n};
    if (job.pieces < threads) threads = job.pieces;
    if (threads <= 1) {
        check_pieces(&job);
    } else {
        fbpe_workers_run(threads, check_pieces, &job);
    }
    return job.bad;
}

/* ---- cuts ---- */

/* Whether an occurrence of a special token starts before c and ends after it. */
static int inside_special(const fbpe_file_job *job, size_t c) {
    for (size_t t = 0; t < job->num_avoid; t++) {
        size_t len = job->avoid_len[t];
        if (len < 2) continue;
        const uint8_t *tok = job->avoid[t];
        size_t from = c >= len - 1 ? c - (len - 1) : 0;
        for (size_t s = from; s < c; s++) {
            if (len <= job->n - s && job->data[s] == tok[0] && memcmp(job->data + s, tok, len) == 0)
                return 1;
        }
    }
    return 0;
}

/* Where block j (1 <= j < units) begins: see file_encode.h; 0 for none. */
static size_t boundary(const fbpe_file_job *job, size_t j) {
    size_t hi = j * job->block, lo = hi - job->block;
    size_t c = fbpe_safe_cut(job->cl, job->data, job->n, lo, hi);
    while (c && inside_special(job, c)) c = c - 1 > lo ? fbpe_safe_cut(job->cl, job->data, job->n, lo, c - 1) : 0;
    return c;
}

/* ---- the units of a JSONL file ---- */

/* The first place in [at, limit) where a line starts (0, or just after a '\n'; at most n),
 * or SIZE_MAX. */
static size_t line_start(const fbpe_file_job *job, size_t at, size_t limit) {
    if (at == 0) return 0;
    if (limit > job->n + 1) limit = job->n + 1;
    if (at >= limit) return SIZE_MAX;
    /* A line starts at s when data[s - 1] is a newline: look at data[at - 1 .. limit - 1). */
    const uint8_t *nl = (const uint8_t *)memchr(job->data + at - 1, '\n', limit - at);
    return nl ? (size_t)(nl - job->data) + 1 : SIZE_MAX;
}

void fbpe_file_jsonl_unit(const fbpe_file_job *job, size_t k, size_t *start, size_t *stop) {
    /* k < units, so lo < n (or n == 0) and hi <= n + block, which does not overflow. */
    size_t lo = k * job->block, hi = lo + job->block;
    /* The search for the start stops at the block's end: the workers of the empty units
     * inside a line longer than many blocks do not each read the rest of it. */
    size_t a = line_start(job, lo, hi);
    if (a == SIZE_MAX) {
        *start = *stop = 0;
        return;
    }
    size_t b = line_start(job, hi, job->n + 1);
    *start = a;
    *stop = b == SIZE_MAX ? job->n : b;
}

/* A worker's reading of a JSONL unit: its documents and where each one's ids end. */
typedef struct {
    fbpe_jsonl_docs docs;
    size_t *id_ends;
    size_t id_ends_cap;
    uint64_t lines;
} jsonl_unit;

/* Unit k's documents into u and their ids into out. Returns 0, or 1 with *handed set (the
 * unit is the caller's to read) or fail->status set. */
static int read_jsonl_unit(const fbpe_file_job *job, size_t k, fbpe_cache *cache, fbpe_ids *out,
                           jsonl_unit *u, int *handed, fbpe_file_result *fail) {
    size_t start, stop;
    fbpe_file_jsonl_unit(job, k, &start, &stop);
    out->len = 0;
    u->docs.len = u->docs.num = 0;
    u->lines = 0;
    if (start == stop) return 0;
    size_t pos = 0, line_end = 0;
    uint64_t line = 0;
    fbpe_status st = fbpe_jsonl_extract(job->data + start, stop - start, job->key, job->key_len, &pos,
                                        &line_end, &line, &u->docs);
    if (st == FBPE_MORE) {
        *handed = 1;
        return 1;
    }
    if (st != FBPE_OK) {
        fail->status = st;
        return 1;
    }
    u->lines = line;
    size_t num = u->docs.num;
    if (num > u->id_ends_cap) {
        size_t cap = fbpe_grow_to(u->id_ends_cap, 256, num, sizeof(size_t));
        size_t *grown = cap ? (size_t *)realloc(u->id_ends, fbpe_array_bytes(cap, sizeof(size_t))) : NULL;
        if (!grown) {
            fail->status = FBPE_ENOMEM;
            return 1;
        }
        u->id_ends = grown;
        u->id_ends_cap = cap;
    }
    for (size_t d = 0; d < num; d++) {
        size_t a = d ? (size_t)u->docs.ends[d - 1] : 0, b = (size_t)u->docs.ends[d];
        if (b > a) {
            const uint8_t *text = u->docs.text + a;
            if (job->needles && fbpe_needles_in(job->needles, text, b - a)) {
                *handed = 1;
                return 1;
            }
            st = fbpe_encode_text(job->b, cache, job->sp, text, b - a, out);
            if (st == FBPE_EPATTERN) { /* the stream path runs the regex */
                *handed = 1;
                return 1;
            }
            if (st != FBPE_OK) {
                fail->status = st;
                return 1;
            }
        }
        u->id_ends[d] = out->len;
    }
    return 0;
}

/* ---- the pipeline ---- */

typedef struct {
    uint8_t *buf;
    size_t cap, len, ids;
    /* JSONL: where each document starts among the slot's ids, then (by the writer) the
     * index file's bytes for it. */
    uint64_t *starts;
    size_t starts_cap, docs;
    uint64_t text_bytes, lines;
    int done;
} slot;

typedef struct {
    const fbpe_file_job *job;
    size_t units, end;
    lock_t mu;
    cond_t moved; /* the writer moved on, or the run stopped */
    /* Guarded by mu: */
    size_t next, written;
    int writing, stop;
    size_t failed_unit; /* the first unit that failed: its failure is the one reported */
    size_t handed;      /* the first unit handed to the caller (JSONL), or SIZE_MAX */
    slot *slots;
    size_t num_slots;
    fbpe_file_result *result;
    fbpe_cache *shared; /* the cache of every worker (fbpe_cache_share), or NULL: each its own */
} run_state;

static void put(uint8_t *at, uint32_t value, int width) {
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
    if (width == 4) {
        at[2] = (uint8_t)(value >> 16);
        at[3] = (uint8_t)(value >> 24);
    }
}

/* Unit k's ids into out, then laid out into sl. Returns 0, or what failed (in *result form:
 * status, holds_needle or too_wide set in `fail`). */
static int encode_unit(const fbpe_file_job *job, size_t units, size_t k, fbpe_cache *cache,
                       fbpe_ids *out, size_t *begin, size_t *finish, fbpe_file_result *fail) {
    size_t start = k == 0 ? 0 : boundary(job, k);
    out->len = 0;
    *begin = *finish = 0;
    if (k > 0 && start == 0) return 0; /* no boundary in this block: the unit before runs on */
    size_t j = k + 1, c = 0;
    for (; j < units; j++) {
        c = boundary(job, j);
        if (c) break;
    }
    size_t stop = j < units ? c : job->n;
    *begin = start;
    *finish = stop;
    if (stop == start) return 0; /* an empty file (data may be NULL) */
    if (job->needles && fbpe_needles_in(job->needles, job->data + start, stop - start)) {
        fail->holds_needle = 1;
        return 1;
    }
    fbpe_status st = fbpe_encode_text(job->b, cache, job->sp, job->data + start, stop - start, out);
    if (st != FBPE_OK) {
        fail->status = st;
        return 1;
    }
    return 0;
}

/* Room in sl for `count` ids of the job's width: its size in bytes, or 0 with
 * fail->status set (count is never 0 here). */
static size_t slot_room(const fbpe_file_job *job, size_t count, slot *sl, fbpe_file_result *fail) {
    size_t width = (size_t)job->width;
    if (count > SIZE_MAX / width) {
        fail->status = FBPE_ENOMEM;
        return 0;
    }
    size_t need = count * width;
    if (need > sl->cap) {
        size_t cap = sl->cap ? sl->cap : 4096;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        uint8_t *grown = (uint8_t *)realloc(sl->buf, cap);
        if (!grown) {
            fail->status = FBPE_ENOMEM;
            return 0;
        }
        sl->buf = grown;
        sl->cap = cap;
    }
    return need;
}

static int lay_out(const fbpe_file_job *job, const fbpe_ids *ids, int ends, slot *sl, fbpe_file_result *fail) {
    size_t count = ids->len + (ends && job->with_eot);
    size_t width = (size_t)job->width;
    sl->docs = 0;
    sl->text_bytes = sl->lines = 0;
    size_t need = count ? slot_room(job, count, sl, fail) : 0;
    if (count && !need) return 1;
    const uint32_t *map = job->out_map;
    uint32_t widest = 0;
    uint8_t *at = sl->buf;
    for (size_t i = 0; i < ids->len; i++, at += width) {
        uint32_t value = map ? map[ids->ids[i]] : ids->ids[i];
        widest |= value;
        put(at, value, job->width);
    }
    if (ends && job->with_eot) {
        widest |= job->eot;
        put(at, job->eot, job->width);
    }
    if (job->width == 2 && widest > 0xFFFF) {
        fail->too_wide = 1;
        return 1;
    }
    sl->len = need;
    sl->ids = count;
    return 0;
}

/* A JSONL unit's ids laid out into sl, the eot after each document, and where each starts. */
static int lay_out_jsonl(const fbpe_file_job *job, const fbpe_ids *ids, const jsonl_unit *u, slot *sl,
                         fbpe_file_result *fail) {
    size_t num = u->docs.num, eots = job->with_eot ? num : 0;
    size_t count = ids->len + eots; /* no overflow: ids->len ids and num starts are in memory */
    size_t width = (size_t)job->width;
    sl->len = sl->ids = sl->docs = 0;
    sl->text_bytes = u->docs.len;
    sl->lines = u->lines;
    if (num > sl->starts_cap) {
        size_t cap = fbpe_grow_to(sl->starts_cap, 64, num, sizeof(uint64_t));
        uint64_t *grown = cap ? (uint64_t *)realloc(sl->starts, fbpe_array_bytes(cap, sizeof(uint64_t))) : NULL;
        if (!grown) {
            fail->status = FBPE_ENOMEM;
            return 1;
        }
        sl->starts = grown;
        sl->starts_cap = cap;
    }
    size_t need = count ? slot_room(job, count, sl, fail) : 0;
    if (count && !need) return 1;
    const uint32_t *map = job->out_map;
    uint32_t widest = 0;
    uint8_t *at = sl->buf;
    size_t i = 0;
    for (size_t d = 0; d < num; d++) {
        sl->starts[d] = i + (job->with_eot ? d : 0);
        for (; i < u->id_ends[d]; i++, at += width) {
            uint32_t value = map ? map[ids->ids[i]] : ids->ids[i];
            widest |= value;
            put(at, value, job->width);
        }
        if (job->with_eot) {
            widest |= job->eot;
            put(at, job->eot, job->width);
            at += width;
        }
    }
    if (job->width == 2 && widest > 0xFFFF) {
        fail->too_wide = 1;
        return 1;
    }
    sl->len = need;
    sl->ids = count;
    sl->docs = num;
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        long got = (long)WRITE(fd, p, n);
        if (got < 0) {
            if (errno == EINTR) continue;
            return errno ? errno : EIO;
        }
        if (got == 0) return EIO;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Record a failure of unit k (under mu); the first unit's failure is the one kept. */
static void failed(run_state *run, size_t k, const fbpe_file_result *fail) {
    if (k < run->failed_unit) {
        run->failed_unit = k;
        run->result->status = fail->status;
        run->result->holds_needle = fail->holds_needle;
        run->result->too_wide = fail->too_wide;
        run->result->write_errno = fail->write_errno;
        run->result->index_errno = fail->index_errno;
    }
    run->stop = 1;
    BROADCAST(&run->moved);
}

/* A unit from k on is the caller's (under mu): the run ends before the first such unit. */
static void handed(run_state *run, size_t k) {
    if (k < run->handed) run->handed = k;
    if (k < run->end) run->end = k;
    BROADCAST(&run->moved);
}

/* The slot's document starts as the index file's bytes: `base` added, little-endian. */
static void index_bytes(slot *sl, uint64_t base) {
    for (size_t d = 0; d < sl->docs; d++) {
        uint64_t v = base + sl->starts[d];
        uint8_t le[8];
        for (int b = 0; b < 8; b++) le[b] = (uint8_t)(v >> (8 * b));
        memcpy(&sl->starts[d], le, 8);
    }
}

/* Write the slots finished in order (under mu, which it releases around each write). */
static void write_in_order(run_state *run) {
    const fbpe_file_job *job = run->job;
    run->writing = 1;
    while (!run->stop && run->written < run->end) {
        slot *sl = &run->slots[run->written % run->num_slots];
        if (!sl->done) break;
        uint64_t base = job->index_base + run->result->ids;
        UNLOCK(&run->mu);
        int err = sl->len ? write_all(job->fd, sl->buf, sl->len) : 0, index_err = 0;
        if (!err && sl->docs && job->index_fd >= 0) {
            index_bytes(sl, base);
            index_err = write_all(job->index_fd, (const uint8_t *)sl->starts, sl->docs * sizeof(uint64_t));
        }
        LOCK(&run->mu);
        if (err || index_err) {
            fbpe_file_result fail;
            memset(&fail, 0, sizeof fail);
            fail.write_errno = err;
            fail.index_errno = index_err;
            failed(run, run->written, &fail);
            break;
        }
        run->result->ids += sl->ids;
        run->result->bytes += sl->len;
        run->result->docs += sl->docs;
        run->result->text_bytes += sl->text_bytes;
        run->result->lines += sl->lines;
        sl->done = 0;
        run->written++;
        BROADCAST(&run->moved);
    }
    run->writing = 0;
}

static void work(void *arg) {
    run_state *run = (run_state *)arg;
    const fbpe_file_job *job = run->job;
    fbpe_cache *cache = fbpe_cache_take_in(job->b, run->shared);
    fbpe_ids ids;
    fbpe_ids_init(&ids);
    jsonl_unit unit;
    memset(&unit, 0, sizeof unit);
    fbpe_jsonl_docs_init(&unit.docs);
    LOCK(&run->mu);
    while (!run->stop && run->next < run->end) {
        size_t k = run->next++;
        UNLOCK(&run->mu);
        fbpe_file_result fail;
        memset(&fail, 0, sizeof fail);
        fail.status = FBPE_OK;
        size_t begin = 0, finish = 0;
        int to_caller = 0;
        int bad = job->jsonl ? read_jsonl_unit(job, k, cache, &ids, &unit, &to_caller, &fail)
                             : encode_unit(job, run->units, k, cache, &ids, &begin, &finish, &fail);
        LOCK(&run->mu);
        if (k >= run->end) continue; /* a unit before it was handed to the caller */
        if (to_caller) {
            handed(run, k);
            continue;
        }
        if (bad) {
            failed(run, k, &fail);
            break;
        }
        /* Wait for this unit's slot: the one of k - num_slots, once written. The worker of
         * the unit next in order never waits (its slot is free), so the ring always moves. */
        while (!run->stop && k < run->end && k >= run->written + run->num_slots) WAIT(&run->moved, &run->mu);
        if (run->stop) break;
        if (k >= run->end) continue;
        slot *sl = &run->slots[k % run->num_slots];
        UNLOCK(&run->mu);
        /* The slot is this worker's until it is marked done. */
        if (job->jsonl) {
            bad = lay_out_jsonl(job, &ids, &unit, sl, &fail);
        } else {
            int ends = finish == job->n && (k == 0 || begin != 0);
            bad = lay_out(job, &ids, ends, sl, &fail);
        }
        LOCK(&run->mu);
        if (bad) {
            failed(run, k, &fail);
            break;
        }
        sl->done = 1;
        if (!run->writing) write_in_order(run);
    }
    UNLOCK(&run->mu);
    fbpe_jsonl_docs_free(&unit.docs);
    free(unit.id_ends);
    fbpe_ids_free(&ids);
    fbpe_cache_give(job->b, cache);
}

void fbpe_file_encode(const fbpe_file_job *job, size_t first, size_t end, size_t threads,
                      fbpe_file_result *result) {
    memset(result, 0, sizeof *result);
    result->status = FBPE_OK;
    run_state run;
    memset(&run, 0, sizeof run);
    run.job = job;
    run.units = fbpe_file_units(job);
    run.end = end < run.units ? end : run.units;
    run.next = run.written = first;
    run.failed_unit = SIZE_MAX;
    run.handed = SIZE_MAX;
    run.result = result;
    result->written_end = first;
    if (first >= run.end) return;
    if (threads < 1) threads = 1;
    if (threads > run.end - first) threads = run.end - first;
    run.num_slots = SLOTS_PER_THREAD * threads;
    run.slots = (slot *)calloc(run.num_slots, sizeof(slot));
    if (!run.slots) {
        result->status = FBPE_ENOMEM;
        return;
    }
    LOCK_INIT(&run.mu);
    COND_INIT(&run.moved);
    if (threads <= 1) {
        work(&run);
    } else {
        /* about `block` bytes a unit; at most n + block, which does not overflow */
        size_t bytes = (run.end - first) * job->block;
        run.shared = fbpe_cache_share(job->b, bytes < job->n ? bytes : job->n);
        fbpe_workers_run(threads, work, &run);
        fbpe_cache_unshare(job->b, run.shared);
    }
    COND_FREE(&run.moved);
    LOCK_FREE(&run.mu);
    result->written_end = run.written;
    result->for_python = run.handed != SIZE_MAX && run.handed == run.written;
    for (size_t s = 0; s < run.num_slots; s++) {
        free(run.slots[s].buf);
        free(run.slots[s].starts);
    }
    free(run.slots);
}
