/* The compiled pattern matcher; see regex_vm.h. */
#include "regex_vm.h"

#include <stdlib.h>
#include <string.h>

#include "../common/utf8.h"

/* Backtrack frames. */
enum {
    F_ALT = 0,    /* resume at pc, pos */
    F_GREEDY = 1, /* a greedy run: give back one character from pos (not below aux), go on at pc */
    F_LAZY = 2,   /* a lazy run at instruction pc: take one more character after pos (aux taken) */
    F_ATOMIC = 3  /* where an atomic group started: ATOMIC_END forgets the frames above it */
};

void fbpe_rx_vm_init(fbpe_rx_vm *vm, size_t n) {
    uint64_t per = (uint64_t)FBPE_RX_STEPS_PER_BYTE;
    vm->steps_left = (uint64_t)n > (UINT64_MAX - FBPE_RX_BASE_STEPS) / per
                         ? UINT64_MAX
                         : FBPE_RX_BASE_STEPS + per * (uint64_t)n;
    vm->max_frames = n > (FBPE_RX_MAX_FRAMES - FBPE_RX_BASE_FRAMES) / FBPE_RX_FRAMES_PER_BYTE
                         ? FBPE_RX_MAX_FRAMES
                         : FBPE_RX_BASE_FRAMES + FBPE_RX_FRAMES_PER_BYTE * n;
    vm->frames = vm->inline_frames;
    vm->top = 0;
    vm->cap = FBPE_RX_INLINE_FRAMES;
    vm->status = FBPE_OK;
    vm->reach = 0;
}

void fbpe_rx_vm_free(fbpe_rx_vm *vm) {
    if (vm->frames != vm->inline_frames) free(vm->frames);
    vm->frames = vm->inline_frames;
    vm->cap = FBPE_RX_INLINE_FRAMES;
    vm->top = 0;
}

/* Room for one more frame; 0 when the stack may not grow (status set). */
static int grow(fbpe_rx_vm *vm) {
    if (vm->cap >= vm->max_frames) {
        vm->status = FBPE_EPATTERN;
        return 0;
    }
    size_t cap = fbpe_grow_to(vm->cap, FBPE_RX_INLINE_FRAMES, vm->cap + 1, sizeof(fbpe_rx_frame));
    if (cap > vm->max_frames) cap = vm->max_frames;
    fbpe_rx_frame *grown;
    if (vm->frames == vm->inline_frames) {
        grown = cap ? malloc(cap * sizeof *grown) : NULL;
        if (grown) memcpy(grown, vm->inline_frames, vm->top * sizeof *grown);
    } else {
        grown = cap ? realloc(vm->frames, cap * sizeof *grown) : NULL;
    }
    if (!grown) {
        vm->status = FBPE_ENOMEM;
        return 0;
    }
    vm->frames = grown;
    vm->cap = cap;
    return 1;
}

static inline int push(fbpe_rx_vm *vm, uint32_t kind, uint32_t pc, size_t pos, size_t aux) {
    if (vm->top == vm->cap && !grow(vm)) return 0;
    fbpe_rx_frame *f = &vm->frames[vm->top++];
    f->kind = kind;
    f->pc = pc;
    f->pos = pos;
    f->aux = aux;
    return 1;
}

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NOINLINE
#define ALWAYS_INLINE inline
#endif

/* The class of code point cp: the row of p->masks (its atoms) and p->alts. */
static inline uint8_t class_of(const fbpe_rx *p, uint32_t cp) {
    return p->blocks[(size_t)p->index[cp >> 8] * 256 + (cp & 0xFF)];
}

/* The atoms of the character at s[i]; its length in *len. */
static inline uint64_t atoms_at(const fbpe_rx *p, const uint8_t *s, size_t i, size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return p->ascii_masks[s[i]];
    }
    /* decoded in a statement of its own: as class_of's argument, run_loop took 0.09 M more
     * instructions on Russian (benchmarks/callgrind_superwords.py) */
    uint32_t cp = fbpe_utf8_decode(s, i, len);
    return p->masks[class_of(p, cp)];
}

/* The class of the character at s[i] (beyond ASCII). */
static inline uint8_t class_at(const fbpe_rx *p, const uint8_t *s, size_t i) {
    size_t len;
    return class_of(p, fbpe_utf8_decode(s, i, &len));
}

/* The start of the character that ends at e (> 0). */
static inline size_t char_before(const uint8_t *s, size_t e) {
    size_t k = e - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80) k--;
    return k;
}

/* The end of the run of ASCII spaces from i, eight bytes at a time (indentation). */
static inline size_t ascii_spaces(const uint8_t *s, size_t i, size_t n) {
    const uint16_t one = 1;
    if (*(const uint8_t *)&one == 1) {
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t other = w ^ 0x2020202020202020ull;
            if (other) return i + (size_t)__builtin_ctzll(other) / 8;
            i += 8;
        }
    }
    while (i < n && s[i] == ' ') i++;
    return i;
}

/* What the matcher read: the furthest offset whose byte (or whose being the end) a decision
 * depended on (fbpe_rx_safe_cut). */
#define SEEN(x)                                                                                \
    do {                                                                                       \
        if ((x) > reach) reach = (x);                                                          \
    } while (0)

/* Dispatch. With GCC and Clang each instruction's handler jumps to the next handler itself
 * (computed goto), so that the branch predictor learns each handler's successors: on the
 * shipped patterns the single indirect jump of a switch was the hottest instruction of the
 * matcher (perf), mispredicted at nearly every dispatch. Elsewhere it is a switch. */
#if defined(__GNUC__)
#define RX_THREADED 1
#else
#define RX_THREADED 0
#endif

#if RX_THREADED
#define NEXT()                                                                                 \
    do {                                                                                       \
        in = &code[pc];                                                                        \
        if (steps == 0) goto give_up;                                                          \
        steps--;                                                                               \
        goto *labels[in->op & 15];                                                             \
    } while (0)
#define OP(NAME) case FBPE_RX_##NAME: op_##NAME:
#else
#define NEXT() continue
#define OP(NAME) case FBPE_RX_##NAME:
#endif

/* Run from instruction pc at pos: 1 on a match (its end in *end), 0 on none, -1 when the
 * matcher gives up (vm->status). `start` is where the piece starts: MATCH refuses an empty
 * match there. A look-ahead body is run by a nested call (depth), which succeeds at
 * LOOK_END; its frames are dropped when it returns, since regex never backtracks into a
 * look-ahead that has succeeded. The step count lives in a local between calls. */
static int run(const fbpe_rx *p, fbpe_rx_vm *vm, uint32_t pc, size_t pos, const uint8_t *s,
               size_t start, size_t n, size_t *end, int depth) {
    const size_t base = vm->top;
    const fbpe_rx_ins *const code = p->code;
    const fbpe_rx_ins *in;
    uint64_t steps = vm->steps_left;
    size_t reach = vm->reach; /* kept in a register; stored back on the way out */
    size_t len;
    int result;
#if RX_THREADED
    static const void *const labels[16] = {
        &&op_BAD,  &&op_ATOM, &&op_RUN_GREEDY, &&op_RUN_LAZY, &&op_RUN_POSSESSIVE,
        &&op_SPLIT, &&op_JMP, &&op_MATCH, &&op_BEGIN, &&op_EOL, &&op_END, &&op_LOOK,
        &&op_LOOK_END, &&op_ATOMIC, &&op_ATOMIC_END, &&op_LOOK_ATOM};
    NEXT();
#endif
    for (;;) {
        in = &code[pc];
        if (steps == 0) goto give_up;
        steps--;
        switch (in->op) {
        OP(ATOM)
            SEEN(pos);
            if (pos < n && (atoms_at(p, s, pos, &len) >> in->a & 1)) {
                pos += len;
                pc++;
                NEXT();
            }
            goto fail;
        OP(RUN_GREEDY)
        OP(RUN_POSSESSIVE) {
            /* The whole run up to max; then the frame that gives it back down to min. */
            size_t e = pos, at_min = pos;
            uint32_t k = 0;
            if (in->c == FBPE_RX_INF && p->spans[in->a].kind != FBPE_RX_ASCII_ANY) {
                /* ASCII eight bytes at a time; one byte is one character. No test of the
                 * first byte before it (the straight-line steps have one): in the matcher
                 * it cost SuperBPE's stage two, whose pieces the matcher finds, 14M
                 * instructions per MB of English (173M against 159M) and saved no pattern
                 * more than 0.3M. */
                e = p->spans[in->a].kind == FBPE_RX_ASCII_RANGE ? fbpe_rx_ascii_span(&p->spans[in->a], s, pos, n)
                                                                : ascii_spaces(s, pos, n);
                k = (uint32_t)(e - pos < in->b ? e - pos : in->b); /* only compared with min */
                if (e - pos >= in->b) at_min = pos + in->b;
            }
            while (k < in->c && e < n) {
                if (!(atoms_at(p, s, e, &len) >> in->a & 1)) break;
                e += len;
                if (++k == in->b) at_min = e;
            }
            SEEN(k < in->c ? e : (e > pos ? e - 1 : pos)); /* at max it did not look at e */
            if (k < in->b) goto fail;
            if (steps < (e - pos)) goto give_up;
            steps -= e - pos;
            /* Before MATCH or LOOK_END the frame is never used: the match ends at e. */
            if (in->op == FBPE_RX_RUN_GREEDY && e > at_min && in[1].op != FBPE_RX_MATCH &&
                in[1].op != FBPE_RX_LOOK_END && !push(vm, F_GREEDY, pc + 1, e, at_min))
                goto give_up;
            pos = e;
            pc++;
            NEXT();
        }
        OP(RUN_LAZY) {
            size_t e = pos;
            uint32_t k = 0;
            while (k < in->b) {
                SEEN(e);
                if (e >= n || !(atoms_at(p, s, e, &len) >> in->a & 1)) goto fail;
                e += len;
                k++;
            }
            if (k < in->c && !push(vm, F_LAZY, pc, e, k)) goto give_up;
            pos = e;
            pc++;
            NEXT();
        }
        OP(SPLIT)
            /* A guarded first arm that cannot start on the next character is skipped
             * without a frame (regex_program._Emitter.guard). */
            if (in->c) SEEN(pos);
            if (in->c && (pos >= n || !(atoms_at(p, s, pos, &len) & p->guards[in->c - 1]))) {
                pc = in->b;
                NEXT();
            }
            if (!push(vm, F_ALT, in->b, pos, 0)) goto give_up;
            pc = in->a;
            NEXT();
        OP(JMP)
            pc = in->a;
            NEXT();
        OP(MATCH)
            if (pos == start) goto fail; /* findall tries for a non-empty match here */
            *end = pos;
            result = 1;
            goto done;
        OP(LOOK_END)
            *end = pos;
            result = 1;
            goto done;
        OP(BEGIN)
            if (pos != 0) goto fail;
            pc++;
            NEXT();
        OP(EOL)
            SEEN(pos < n ? pos + 1 : n);
            if (pos != n && !(pos + 1 == n && s[pos] == '\n')) goto fail;
            pc++;
            NEXT();
        OP(END)
            SEEN(pos);
            if (pos != n) goto fail;
            pc++;
            NEXT();
        OP(LOOK) {
            size_t ignored;
            if (depth >= FBPE_RX_MAX_LOOK_DEPTH) goto give_up;
            vm->steps_left = steps;
            vm->reach = reach;
            int r = run(p, vm, pc + 1, pos, s, start, n, &ignored, depth + 1);
            steps = vm->steps_left;
            reach = vm->reach;
            if (r < 0) {
                vm->top = base;
                return r;
            }
            if (r == (int)(in->a == 0)) {
                pc = in->b;
                NEXT();
            }
            goto fail;
        }
        OP(LOOK_ATOM)
            /* A look-ahead of one character: matched here, as the nested run would. */
            SEEN(pos);
            if ((pos < n && (atoms_at(p, s, pos, &len) >> in->b & 1)) == (in->a == 0)) {
                pc++;
                NEXT();
            }
            goto fail;
        OP(ATOMIC)
            if (!push(vm, F_ATOMIC, 0, 0, 0)) goto give_up;
            pc++;
            NEXT();
        OP(ATOMIC_END) {
            size_t t = vm->top;
            while (t > base && vm->frames[t - 1].kind != F_ATOMIC) t--;
            vm->top = t > base ? t - 1 : base; /* the group's own mark goes too */
            pc++;
            NEXT();
        }
        default:
#if RX_THREADED
        op_BAD:
#endif
            vm->status = FBPE_EINTERNAL;
            vm->top = base;
            vm->steps_left = steps;
            return -1;
        }
    fail:
        /* Back to the latest choice that is left. */
        for (;;) {
            if (vm->top == base) {
                result = 0;
                goto done;
            }
            fbpe_rx_frame *f = &vm->frames[vm->top - 1];
            if (f->kind == F_ALT) {
                pc = f->pc;
                pos = f->pos;
                vm->top--;
                break;
            }
            if (f->kind == F_GREEDY) {
                size_t e = char_before(s, f->pos);
                const fbpe_rx_ins *next = &code[f->pc];
                if (next->op == FBPE_RX_ATOM) {
                    /* What follows the run is one character of an atom (\s*[\r\n]): the
                     * run is given back straight to the last place where that atom
                     * matches, not one dispatch and one failure per character. */
                    while (e > f->aux && !(atoms_at(p, s, e, &len) >> next->a & 1)) {
                        e = char_before(s, e);
                        if (steps == 0) goto give_up;
                        steps--;
                    }
                }
                pc = f->pc;
                pos = e;
                if (e > f->aux)
                    f->pos = e;
                else
                    vm->top--;
                break;
            }
            if (f->kind == F_LAZY) {
                const fbpe_rx_ins *run_in = &code[f->pc];
                SEEN(f->pos);
                if (f->pos < n && (atoms_at(p, s, f->pos, &len) >> run_in->a & 1)) {
                    f->pos += len;
                    f->aux++;
                    pc = f->pc + 1;
                    pos = f->pos;
                    if (f->aux >= run_in->c) vm->top--;
                    break;
                }
                vm->top--;
                continue;
            }
            vm->top--; /* an atomic group's mark: nothing to try */
        }
        NEXT();
    }
done:
    vm->top = base;
    vm->steps_left = steps;
    vm->reach = reach;
    return result;
give_up:
    if (vm->status == FBPE_OK) vm->status = FBPE_EPATTERN;
    vm->top = base;
    vm->steps_left = 0;
    vm->reach = reach;
    return -1;
}

#undef NEXT
#undef OP

/* A STAR step X{min,} from pos: the end of the run in *end (the last offset it read: its
 * reach), whether it took at least min characters, and in *wide whether it took a character
 * that is not ASCII (it leaves *wide alone otherwise). */
static inline int star_run(const fbpe_rx *p, const fbpe_rx_step *st, const uint8_t *s, size_t pos,
                           size_t n, size_t *end, int *wide, int check_empty) {
    size_t e = pos, len;
    uint32_t k;
    if (st->ascii == FBPE_RX_ASCII_RANGE) {
        /* A run that may be empty mostly is (o200k's upper-case run before the lower-case
         * one): one byte's test before the eight-byte one. */
        if (check_empty && !st->min && pos < n && s[pos] < 0x80 &&
            !(p->ascii_masks[s[pos]] >> st->atom & 1)) {
            *end = pos;
            return 1;
        }
        e = fbpe_rx_ascii_span(&p->spans[st->atom], s, pos, n);
        if (e < n && s[e] < 0x80) {
            /* Stopped by an ASCII character outside the range: the run ends. */
            *end = e;
            return e - pos >= st->min;
        }
    } else if (st->ascii == FBPE_RX_ASCII_SPACES)
        e = ascii_spaces(s, pos, n);
    k = (uint32_t)(e - pos < st->min ? e - pos : st->min); /* only compared with min */
    while (e < n) {
        if (s[e] < 0x80) {
            if (!(p->ascii_masks[s[e]] >> st->atom & 1)) break;
            e++;
        } else {
            if (!(atoms_at(p, s, e, &len) >> st->atom & 1)) break;
            e += len;
            *wide = 1;
        }
        if (k < st->min) k++;
    }
    *end = e;
    return k >= st->min;
}

/* A RUN_NOT step X{min,}(?!Y) from pos (fbpe_rx_prepare): 0 where it fails, 1 where it ends
 * at *end, 2 where it ends one character before *end; *end is also the last offset it
 * read (where the run stopped). */
static inline int run_not(const fbpe_rx *p, const fbpe_rx_step *st, const uint8_t *s, size_t pos,
                          size_t n, size_t *end) {
    size_t e = pos, len;
    uint64_t stopped = 0; /* the atoms of the character that ended the run */
    uint32_t k;
    if (st->ascii == FBPE_RX_ASCII_SPACES) e = ascii_spaces(s, pos, n);
    else if (st->ascii == FBPE_RX_ASCII_RANGE) e = fbpe_rx_ascii_span(&p->spans[st->atom], s, pos, n);
    /* k: characters taken, counted up to min + 1 (only compared with min and min + 1) */
    k = (uint32_t)(e - pos <= st->min ? e - pos : st->min + 1);
    while (e < n) {
        uint64_t a = atoms_at(p, s, e, &len);
        if (!(a >> st->atom & 1)) {
            stopped = a;
            break;
        }
        e += len;
        if (k <= st->min) k++;
    }
    *end = e;
    if (k < st->min) return 0;
    if (stopped >> st->look & 1) {
        /* (?!Y) fails where the run stopped; one character back it holds (that
         * character is X's, so not Y's), if the run may give one back. */
        return k > st->min ? 2 : 0;
    }
    return 1;
}

/* The straight-line steps L of an alternative from i (fbpe_rx_linear): 1 with their end in
 * *out, 0 where they fail, -1 when the step budget runs out (vm->status). Each step reads
 * and decides as the matcher's instruction would, and the steps are charged to the same
 * budget (once per alternative: the reads of one call are bounded by the steps times the
 * text), so the reach and the giving up are the matcher's. Each kind of step has a case of
 * its own, the common ones first: on English prose this loop finds most pieces, and a
 * generic run (count, bounds, fast path tests) in every step cost a third more
 * instructions per piece (callgrind, gpt4). */
#if defined(__GNUC__)
__attribute__((always_inline)) /* called from look_body too: not inlined, o200k cost 115.7M, not 108.7M */
#endif
static inline int run_linear(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_linear *L,
                             const uint8_t *s, size_t i, size_t n, uint64_t here, size_t here_len,
                             size_t *out, uint32_t *resume, int *trusted) {
    /* reach: what this call read, from i; charged, and merged into vm->reach at the end
     * (charging from an earlier call's reach would charge a far look of one piece again
     * at every later piece: quadratic on a text that is scanned in linear time). */
    size_t pos = i, reach = i, len;
    /* took: a greedy step took a character that it could usefully give back: not where
     * the step is futile and the characters it took are ASCII (wide: one was not). On
     * o200k an all-capitals word ("I", "A") then fails its first alternative here, not
     * after the matcher has tried every way of giving back (about 600 instructions). */
    int ok = 1, took = 0, wide;
    const fbpe_rx_step *st = L->steps, *const last = L->steps + L->num_steps;
    /* The first character's atoms are known (`here`, of here_len bytes): a first step that
     * takes at most that character decides from them. */
    if (st->kind == FBPE_RX_STEP_OPT || st->kind == FBPE_RX_STEP_ONE ||
        (st->kind == FBPE_RX_STEP_STAR && !(here >> st->atom & 1))) {
        SEEN(i);
        if (here >> st->atom & 1) {
            pos += here_len;
            took |= st->gives | (st->greedy & (here_len > 1));
        }
        else if (st->kind == FBPE_RX_STEP_ONE || (st->kind == FBPE_RX_STEP_STAR && st->min))
            goto fail;
        st++;
    }
    for (; st < last; st++) {
        switch (st->kind) {
        case FBPE_RX_STEP_OPT: /* X?+ : one character if there is one */
            SEEN(pos);
            if (pos < n && (atoms_at(p, s, pos, &len) >> st->atom & 1)) {
                pos += len;
                took |= st->gives | (st->greedy & (len > 1));
            }
            break;
        case FBPE_RX_STEP_ONE: /* X */
            SEEN(pos);
            if (!(pos < n && (atoms_at(p, s, pos, &len) >> st->atom & 1))) goto fail;
            pos += len;
            break;
        case FBPE_RX_STEP_STAR: { /* X{min,}: as many as there are, at least min */
            size_t e;
            if (!st->min && st->ascii == FBPE_RX_ASCII_RANGE && pos < n && s[pos] < 0x80 &&
                !(p->ascii_masks[s[pos]] >> st->atom & 1)) {
                SEEN(pos); /* empty (star_run's first test, without the rest of the step) */
                break;
            }
            wide = 0;
            int enough = star_run(p, st, s, pos, n, &e, &wide, 0);
            SEEN(e);
            if (!enough) goto fail;
            took |= (e > pos) & (st->gives | (st->greedy & wide));
            pos = e;
            break;
        }
        case FBPE_RX_STEP_RUN_NOT: { /* X{min,}(?!Y): see fbpe_rx_prepare */
            size_t e;
            int holds = run_not(p, st, s, pos, n, &e);
            SEEN(e);
            if (!holds) goto fail;
            pos = holds > 1 ? char_before(s, e) : e;
            break;
        }
        case FBPE_RX_STEP_RANGE: { /* X{min,max} */
            size_t e = pos;
            uint32_t k = 0;
            while (k < st->max && e < n) {
                if (!(atoms_at(p, s, e, &len) >> st->atom & 1)) break;
                e += len;
                k++;
            }
            SEEN(k < st->max ? e : (e > pos ? e - 1 : pos));
            if (k < st->min) goto fail;
            took |= st->greedy & (e > pos); /* futile is not tracked here (no `wide`) */
            pos = e;
            break;
        }
        case FBPE_RX_STEP_LOOK:
            SEEN(pos);
            if ((pos < n && (atoms_at(p, s, pos, &len) >> st->atom & 1)) != !st->negate) goto fail;
            break;
        case FBPE_RX_STEP_EOL:
            SEEN(pos < n ? pos + 1 : n);
            if (!(pos == n || (pos + 1 == n && s[pos] == '\n'))) goto fail;
            break;
        case FBPE_RX_STEP_END:
            SEEN(pos);
            if (pos != n) goto fail;
            break;
        default: /* FBPE_RX_STEP_GUARD */
            SEEN(pos);
            if (pos < n && (atoms_at(p, s, pos, &len) & p->guards[st->min])) {
                *resume = st->max; /* the first arm may match: the matcher decides */
                goto done;
            }
            break;
        }
    }
    *resume = L->next;
done:
    if (0) {
    fail:
        ok = 0;
    }
    /* What was read (at most the reach) and one step per instruction, as the matcher counts. */
    {
        uint64_t cost = (uint64_t)(reach - i) + L->num_steps;
        if (reach > vm->reach) vm->reach = reach;
        if (vm->steps_left <= cost) {
            vm->steps_left = 0;
            vm->status = FBPE_EPATTERN;
            return -1;
        }
        vm->steps_left -= cost;
    }
    *out = pos;
    *trusted = took;
    return ok;
}

/* An alternative that begins with an optional character (regex_program._head) where the
 * character at pos (atoms `here`, len bytes) cannot begin what follows it: can it start here?
 * Only if this character is the optional one and the next begins what follows. The next
 * character's atoms are read once per position (*next_read); how far this read goes into
 * vm->reach, the end of the text included. */
static inline int optional_head_fits(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s,
                                     size_t pos, size_t len, size_t n, uint64_t here,
                                     uint64_t opt, uint64_t after, uint64_t *next,
                                     int *next_read) {
    if (!(here & opt)) return 0;
    if (pos + len >= n) {
        if (vm->reach < n) vm->reach = n; /* it depended on the end */
        return 0;
    }
    if (vm->reach < pos + len) vm->reach = pos + len;
    if (!*next_read) {
        size_t l2;
        *next = atoms_at(p, s, pos + len, &l2);
        *next_read = 1;
    }
    return (*next & after) != 0;
}

/* Does the body of look-ahead lk match at pos (here: the atoms of the character there, of
 * here_len bytes; 0 at the end)? 1 if it does, 0 if not, -1 when the budget runs out. Its
 * alternatives are tried in order as the top-level ones are: skipped where their guard or
 * their head (X? Y) rules out the next characters, then their straight-line steps, then
 * the matcher from where those stop, or from the alternative's start where a step taken on
 * trust may have to give back. On SuperBPE's stage two this is the test at every space and
 * punctuation mark: a space before a word is rejected by the head of
 * ` ?[^\s\p{L}\p{N}]{2,}` and the run-not step of ` +(?!\S)`, with no nested matcher. */
static int look_body(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_look *lk, const uint8_t *s,
                     size_t pos, size_t n, uint64_t here, size_t here_len) {
    uint64_t next = 0;
    int next_read = 0;
    if (vm->reach < pos) vm->reach = pos;
    for (uint32_t k = 0; k < lk->count; k++) {
        const fbpe_rx_sub *sb = &p->subs[lk->first + k];
        if (sb->guard && !(here & sb->guard)) continue;
        if (sb->opt && !(here & sb->after) &&
            !optional_head_fits(p, vm, s, pos, here_len, n, here, sb->opt, sb->after, &next,
                                &next_read))
            continue;
        const fbpe_rx_linear *L = &sb->L;
        size_t from, e;
        uint32_t resume;
        int trusted = 0, r;
        if (L->num_steps == 1 && L->matches && L->steps[0].kind == FBPE_RX_STEP_RUN_NOT) {
            /* ` +(?!\S)`, at every space of SuperBPE's stage two: run_linear's own entry and
             * exit cost more than the step (about 130 instructions a call against 30). */
            r = run_not(p, &L->steps[0], s, pos, n, &e);
            if (e > vm->reach) vm->reach = e;
            if (vm->steps_left <= (uint64_t)(e - pos) + 1) {
                vm->steps_left = 0;
                vm->status = FBPE_EPATTERN;
                return -1;
            }
            vm->steps_left -= (uint64_t)(e - pos) + 1;
            if (r) return 1;
            continue;
        }
        if (L->num_steps) {
            r = run_linear(p, vm, L, s, pos, n, here, here_len, &from, &resume, &trusted);
            if (r < 0) return -1;
            if (r > 0 && resume == L->next && L->matches) return 1; /* empty or not */
            if (r > 0) {
                r = run(p, vm, resume, from, s, pos, n, &e, 1);
                if (r) return r;
            }
            if (!trusted) continue;
        }
        r = run(p, vm, sb->start, pos, s, pos, n, &e, 1);
        if (r) return r;
    }
    return 0;
}

/* The end of the run of loop lp's word arm (fbpe_rx_loop.word) from i: its range held in
 * registers for the whole piece (loaded for every run, 0.15M more instructions per 300,000
 * characters of SuperBPE's stage two), and past a non-ASCII byte through the members of its
 * atom as star_run reads them (a word with an accent). */
static inline size_t word_end(const fbpe_rx *p, const fbpe_rx_loop *lp, fbpe_rx_range16 w, const uint8_t *s,
                              size_t i, size_t n) {
    const fbpe_rx_step *st = &lp->arms[lp->word - FBPE_RX_V_ARM].take;
    int found, wide = 0;
    i = fbpe_rx_range16_end(w, s, i, n, &found);
    if (!found) i = fbpe_rx_ascii_span8(&p->spans[st->atom], s, i, n);
    if (i < n && s[i] >= 0x80) star_run(p, st, s, i, n, &i, &wide, 0);
    return i;
}

/* One iteration of loop lp at pos < n, the arms tried one by one where the tables do not
 * decide it: 1 where an arm takes s[pos..*e), 0 where none matches (the loop ends), -1 when
 * the budget runs out. What it reads goes into *seen. Out of line, so that run_loop keeps
 * its own loop's state in registers (inline, the position lived on the stack). */
NOINLINE static int loop_iteration(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_loop *lp,
                                   const uint8_t *s, size_t pos, size_t n, size_t *seen,
                                   size_t *e) {
    size_t reach = *seen, len;
    int r = 1;
    *e = pos;
    if (s[pos] < 0x80) {
        /* The arms' verdict at an ASCII character, from a table (loop_verdicts). */
        uint8_t v = lp->ascii[s[pos]];
        if (v == FBPE_RX_V_PAIR) {
            v = pos + 1 < n && s[pos + 1] < 0x80 ? p->loop_pairs[lp->pairs - 1][s[pos]][s[pos + 1]] : 0;
            if (!v && pos + 2 < n && s[pos + 1] < 0x80 && s[pos + 2] < 0x80) {
                /* Decided by the third character (a space before punctuation, a number):
                 * the look-ahead's alternatives cost about 440 instructions here. */
                const uint8_t row = p->loop_triple_of[lp->pairs - 1][s[pos]][s[pos + 1]];
                if (row && (v = p->loop_triples[row - 1][s[pos + 2]])) SEEN(pos + 2);
            }
        }
        if ((v & (FBPE_RX_V_READS - 1)) == FBPE_RX_V_END) {
            if (v & FBPE_RX_V_READS) SEEN(pos + 1);
            r = 0;
            goto out;
        }
        v &= FBPE_RX_V_READS - 1; /* an arm's step: what it read, the next iteration sees */
        if (v) {
            const fbpe_rx_step *st = &lp->arms[v - FBPE_RX_V_ARM].take;
            if (st->kind == FBPE_RX_STEP_ONE) {
                *e = pos + 1;
                goto out;
            }
            /* STAR (never RANGE: loop_verdict) */
            int wide = 0;
            if (star_run(p, st, s, pos, n, e, &wide, 0)) goto out; /* the next iteration reads *e */
            SEEN(*e);
            *e = pos; /* too short a run: the arms after it, one by one below */
        }
    }
    const uint64_t here = atoms_at(p, s, pos, &len);
    for (uint32_t a = 0; a < lp->num_arms; a++) {
        const fbpe_rx_arm *arm = &lp->arms[a];
        const fbpe_rx_step *st = &arm->take;
        if (!(here >> st->atom & 1)) continue;
        int ok = 1;
        for (uint32_t t = 0; ok && t < arm->num_tests; t++) {
            int holds;
            if (!arm->test_look[t]) {
                holds = (int)(here >> arm->test_atom[t] & 1);
            } else {
                const fbpe_rx_look *lk = &p->looks[arm->test_look[t] - 1];
                uint8_t known;
                if (lk->pairs && pos + 1 < n && s[pos] < 0x80 && s[pos + 1] < 0x80 &&
                    (known = p->pairs[lk->pairs - 1][s[pos]][s[pos + 1]])) {
                    /* Decided by this character and the next (a space before a word). */
                    SEEN(pos + 1);
                    holds = known - 1;
                    ok = holds != arm->test_negate[t];
                    continue;
                }
                holds = look_body(p, vm, lk, s, pos, n, here, len);
                if (holds < 0) {
                    r = -1;
                    goto out;
                }
            }
            ok = holds != arm->test_negate[t];
        }
        if (!ok) continue;
        if (st->kind == FBPE_RX_STEP_ONE) {
            *e = pos + len;
            goto out;
        }
        if (st->kind == FBPE_RX_STEP_STAR) {
            int wide = 0;
            int enough = star_run(p, st, s, pos, n, e, &wide, 0);
            SEEN(*e);
            if (enough) goto out;
        } else { /* RANGE: at most max characters */
            uint32_t k = 0;
            size_t l2, f = pos;
            while (k < st->max && f < n) {
                if (!(atoms_at(p, s, f, &l2) >> st->atom & 1)) break;
                f += l2;
                k++;
            }
            SEEN(k < st->max ? f : f - 1);
            *e = f;
            if (k >= st->min) goto out;
        }
        *e = pos;
    }
    r = 0;
out:
    *seen = reach;
    return r;
}

/* How loop_tables stopped. */
enum { LOOP_ASK = 0, LOOP_END = 1, LOOP_END_READS = 2 };

/* The iterations of loop lp from pos that its tables decide alone: a character taken alone (a
 * space before a word, by the pair table), a run that an ASCII character ends (a word, read
 * sixteen bytes at a time), and the end of the loop. Whatever a step read, the next
 * iteration stands on (the pair's second character, the character that ended the run), so
 * what they read is up to where they stop (and the next character where the pair decided
 * the end: LOOP_END_READS), and the reach is recorded there once, not at every iteration.
 * Anything else stops them (LOOP_ASK), and loop_iteration decides that iteration from its
 * start, reading what the matcher reads. Returns where they stopped (<= n), *how why. */
static ALWAYS_INLINE size_t loop_tables(const fbpe_rx *p, const fbpe_rx_loop *lp, fbpe_rx_range16 w,
                                        const uint8_t *s, size_t pos, size_t n, int *how) {
    const uint8_t *const verdicts = lp->ascii;
    const uint8_t(*const pairs)[128] = lp->pairs ? p->loop_pairs[lp->pairs - 1] : NULL;
    unsigned c, v;
    size_t e;
    *how = LOOP_ASK;
next:
    if (pos >= n) return pos;
    c = s[pos];
    if (c >= 0x80) {
        /* a member of the word arm's atom, where the word arm is the first and has no
         * look-ahead, takes that arm (French words begin with "é"; through loop_iteration a
         * character beyond ASCII cost SuperBPE's stage two on French about 70 instructions) */
        size_t len;
        if (!lp->word_first ||
            !(atoms_at(p, s, pos, &len) >> lp->arms[0].take.atom & 1))
            return pos;
        e = word_end(p, lp, w, s, pos, n);
        goto word;
    }
decide: /* c = s[pos] < 0x80 */
    v = verdicts[c];
    if (v & FBPE_RX_V_WORD) {
        e = word_end(p, lp, w, s, pos, n);
    word: /* the run is whole: where a non-ASCII byte follows, the next iteration is there */
        if (e < n && s[e] >= 0x80) {
            pos = e;
            goto next;
        }
    } else {
        if (v == FBPE_RX_V_PAIR) {
            if (pos + 1 >= n) return pos;
            if (s[pos + 1] >= 0x80) {
                /* by the next character's class (a space before a Cyrillic word): through
                 * loop_iteration, about 290 instructions (SuperBPE's stage two, Russian) */
                const uint8_t row = p->loop_wide_of[lp->pairs - 1][c];
                v = row ? p->loop_wide[row - 1][class_at(p, s, pos + 1)] : 0;
            } else {
                v = pairs[c][s[pos + 1]];
                if (v & FBPE_RX_V_ONE) { /* the next character is known to be ASCII */
                    c = s[++pos];
                    goto decide;
                }
            }
            if (v & FBPE_RX_V_WORD) { /* a pair that decides for the word arm */
                e = word_end(p, lp, w, s, pos, n);
                goto word;
            }
        }
        if (v & FBPE_RX_V_ONE) {
            pos++;
            goto next;
        }
        if (v & FBPE_RX_V_RUN) {
            e = fbpe_rx_ascii_span(&p->spans[lp->arms[(v & (FBPE_RX_V_READS - 1)) - FBPE_RX_V_ARM].take.atom],
                                   s, pos, n);
        } else {
            if ((v & (FBPE_RX_V_READS - 1)) == FBPE_RX_V_END)
                *how = v & FBPE_RX_V_READS ? LOOP_END_READS : LOOP_END;
            return pos;
        }
    }
    if (e >= n || (c = s[e]) >= 0x80) return pos; /* the run goes on: star_run's */
    pos = e;
    goto decide;
}

/* ---- sixteen iterations' verdicts at once ----
 *
 * Where the text is ASCII, whether an iteration at a character goes on is the loop's verdict
 * at it (fbpe_rx_loop.ascii), or at it and the next (loop_pairs): a few sets of characters
 * (loop_blocks). So sixteen positions are tested at once, each as if an iteration began
 * there, and a block where every one goes on is passed over. That holds for the iterations
 * that do begin there; a position inside a run is a member of the run's range, where an
 * iteration would go on too (loop_blocks takes only loops whose runs have no look-ahead).
 * So the loop goes on at least to the first position that does not surely go on, and the
 * iterations go on one at a time from there, or, where that position may be inside a run,
 * from the last one known to begin an iteration (last_begun). Instructions inside
 * fbpe_encode_text for SuperBPE's stage two (benchmarks/callgrind_superwords.py, 300,000
 * fresh characters; run_loop went through its tables at about 49 instructions for a word and
 * the space before the next): 18.58 M -> 17.40 M. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#define FBPE_RX_BLOCKS 1
/* A vector's bytes split for nibble_members: the low nibbles, and the bit of the high one
 * (none for a non-ASCII byte). */
typedef struct {
    __m128i low, bit;
} nibble_split;

__attribute__((target("ssse3"))) static inline nibble_split nibbles_of(__m128i v) {
    const __m128i low = _mm_set1_epi8(0x0F);
    const __m128i bit_of_hi = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0);
    nibble_split x = {_mm_and_si128(v, low), _mm_shuffle_epi8(bit_of_hi, _mm_and_si128(_mm_srli_epi16(v, 4), low))};
    return x;
}

/* 0xFF at the bytes that are not members of set t (loaded), else 0. */
__attribute__((target("ssse3"))) static inline __m128i nibble_outside(nibble_split x, __m128i t) {
    return _mm_cmpeq_epi8(_mm_and_si128(_mm_shuffle_epi8(t, x.low), x.bit), _mm_setzero_si128());
}

/* The 16 bytes at s + pos and at s + pos + 1 (*cur, *next) with both bytes of each two-byte
 * character that bk reads as ASCII (wide_leads, latin_cont) replaced by bk->wide_as. Only the
 * lanes where such a character begins are found (its lead in *cur, its second byte the same
 * lane of *next); a lane of *cur ends one where the lane before begins one, and lane 0 where
 * the block before began one in its last lane (*carry, 1 or 0, updated). A character that
 * begins in the last lane of *next stays as it is (it stops the block, as before). */
__attribute__((target("ssse3"))) static inline void wide_as_ascii(const fbpe_rx_block *bk, __m128i *cur,
                                                                 __m128i *next, unsigned *carry) {
    const __m128i top = _mm_set1_epi8((char)0x80);
    __m128i c = *cur, x = *next;
    /* the lead byte ^ 0x80 in wide_leads (0x42-0x5F: no ASCII or continuation byte is), or
     * 0xC3 before a continuation byte t with t ^ 0x80 in latin_cont (0x00-0x3F) */
    __m128i other_lead = nibble_outside(nibbles_of(_mm_xor_si128(c, top)),
                                        _mm_loadu_si128((const __m128i *)bk->wide_leads));
    __m128i not_latin = nibble_outside(nibbles_of(_mm_xor_si128(x, top)),
                                       _mm_loadu_si128((const __m128i *)bk->latin_cont));
    __m128i second = _mm_cmplt_epi8(x, _mm_set1_epi8((char)0xC0)); /* signed: 0x80-0xBF */
    __m128i begins = _mm_or_si128(_mm_andnot_si128(other_lead, second),
                                  _mm_andnot_si128(not_latin, _mm_cmpeq_epi8(c, _mm_set1_epi8((char)0xC3))));
    __m128i in_c = _mm_or_si128(begins, _mm_slli_si128(begins, 1));
    in_c = _mm_or_si128(in_c, _mm_cvtsi32_si128((int)(*carry * 0xFFu)));
    __m128i in_x = _mm_or_si128(begins, _mm_srli_si128(begins, 1));
    *carry = (unsigned)_mm_movemask_epi8(begins) >> 15;
    const __m128i as = _mm_set1_epi8((char)bk->wide_as);
    *cur = _mm_or_si128(_mm_andnot_si128(in_c, c), _mm_and_si128(in_c, as));
    *next = _mm_or_si128(_mm_andnot_si128(in_x, x), _mm_and_si128(in_x, as));
}

/* Whether byte c is an ASCII character outside every run's range: an iteration takes it
 * alone, so one begins there, and another after it. */
static inline int taken_alone(const fbpe_rx_block *bk, uint8_t c) {
    return c < 0x80 && !(bk->runs[c & 15] >> (c >> 4) & 1);
}

/* The last position up to `at` (and from `from`, where one begins) that surely begins an
 * iteration: `at` itself where taken_alone, else just after the last such character. */
static size_t last_begun(const fbpe_rx_block *bk, const uint8_t *s, size_t from, size_t at) {
    if (taken_alone(bk, s[at])) return at;
    while (at > from) {
        if (taken_alone(bk, s[--at])) return at + 1;
    }
    return from;
}

/* loop_blocks_from for a loop of `groups` pair groups (a constant: the unused ones cost
 * nothing). */
__attribute__((target("ssse3"), always_inline)) static inline size_t
blocks_of(const fbpe_rx_block *bk, const uint8_t *s, size_t pos, size_t n, size_t *read, const int groups) {
    const size_t from = pos;
    const __m128i always = _mm_loadu_si128((const __m128i *)bk->always);
    const __m128i f0 = _mm_loadu_si128((const __m128i *)bk->pair_first[0]);
    const __m128i f1 = _mm_loadu_si128((const __m128i *)bk->pair_first[1]);
    const __m128i f2 = _mm_loadu_si128((const __m128i *)bk->pair_first[2]);
    const __m128i t0 = _mm_loadu_si128((const __m128i *)bk->pair_then[0]);
    const __m128i t1 = _mm_loadu_si128((const __m128i *)bk->pair_then[1]);
    const __m128i t2 = _mm_loadu_si128((const __m128i *)bk->pair_then[2]);
    unsigned carry = 0; /* the last lane of the block before began a character read as ASCII */
    *read = pos;
    while (n - pos >= 17) {
        __m128i cur = _mm_loadu_si128((const __m128i *)(s + pos));
        __m128i after = _mm_loadu_si128((const __m128i *)(s + pos + 1));
        if (bk->wide_as && _mm_movemask_epi8(_mm_or_si128(cur, after)))
            wide_as_ascii(bk, &cur, &after, &carry);
        else
            carry = 0;
        nibble_split v = nibbles_of(cur);
        /* an iteration stops (or asks) where its character is in no set, or its pair's
         * next character not in the pair set */
        __m128i stop = nibble_outside(v, always);
        if (groups) {
            nibble_split next = nibbles_of(after);
            stop = _mm_and_si128(stop, _mm_or_si128(nibble_outside(v, f0), nibble_outside(next, t0)));
            if (groups > 1)
                stop = _mm_and_si128(stop, _mm_or_si128(nibble_outside(v, f1), nibble_outside(next, t1)));
            if (groups > 2)
                stop = _mm_and_si128(stop, _mm_or_si128(nibble_outside(v, f2), nibble_outside(next, t2)));
        }
        unsigned stops = (unsigned)_mm_movemask_epi8(stop);
        *read = pos + 16;
        if (stops) return last_begun(bk, s, from, pos + (size_t)__builtin_ctz(stops));
        pos += 16;
    }
    return pos < n ? last_begun(bk, s, from, pos) : pos;
}

/* From pos, where an iteration begins: the first position where an iteration does not surely
 * go on (or where fewer than 17 bytes are left), or, where that may be inside a run (a
 * non-ASCII byte, a member of a run's range whose pair did not decide), the last position
 * before it known to begin one (last_begun); *read: the last byte read. The sets in
 * registers, each byte's nibbles found once, the number of groups a constant (with the sets
 * loaded at each test and the groups in a loop, SuperBPE's stage two cost 2.13 M
 * instructions here on the 300,000 characters of benchmarks/callgrind_superwords.py, now
 * 1.24 M). */
__attribute__((target("ssse3"))) static size_t loop_blocks_from(const fbpe_rx_block *bk, const uint8_t *s,
                                                                size_t pos, size_t n, size_t *read) {
    switch (bk->num_groups) {
    case 0:
        return blocks_of(bk, s, pos, n, read, 0);
    case 1:
        return blocks_of(bk, s, pos, n, read, 1);
    case 2:
        return blocks_of(bk, s, pos, n, read, 2);
    default:
        return blocks_of(bk, s, pos, n, read, 3);
    }
}
#endif

/* A loop of arms (fbpe_rx_loop) from i: 1 with the piece's end in *end, 0 where not one arm
 * matches at i, -1 when the budget runs out. Each iteration takes the first arm that
 * matches; the loop ends where none does. Reads as the matcher would (the first character of
 * an arm's atom or run is tested before its look-aheads, which changes nothing but what is
 * read where the arm fails anyway): the iterations that the tables decide by loop_tables,
 * the others by loop_iteration. On SuperBPE's stage two, whose pieces are whole phrases, the
 * matcher spent 158.6M instructions on 1 MB of English (benchmarks/callgrind_scan.py: a
 * dispatch and a frame per instruction of the loop, a nested run for the look-ahead at every
 * space); the arms one by one with look_body, 101.6M; with the look-ahead decided by two
 * characters where they decide it (fbpe_rx.pairs), 75.8M; with the whole iteration at an
 * ASCII character read from a table (the arm it takes, or the end: fbpe_rx_loop.ascii, by
 * that character alone, else fbpe_rx.loop_pairs, by it and the next), 43.6M, the arm loop
 * costing about 70 instructions per iteration, a word and the space before the next one
 * being two. Those iterations in a loop of their own (loop_tables: the tables in registers,
 * no reach or count kept per iteration, the word read by SSE2), about 25, and the pairs that
 * the third character decides by fbpe_rx.loop_triples (a space before punctuation, a
 * number; about 440 instructions through the arms): 27.7M. Inside fbpe_encode_text on
 * 300,000 fresh characters (benchmarks/callgrind_superwords.py) run_loop went from 7.5M
 * instructions to 3.0M. */
#if defined(__GNUC__)
__attribute__((noinline)) /* kept out of fbpe_rx_piece_end, whose hot path is the other patterns' */
#endif
static int run_loop(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_loop *lp, const uint8_t *s,
                    size_t i, size_t n, size_t *end) {
    size_t pos = i, reach = i;
    /* An iteration is charged what it took and 2 (a character taken alone: 3, one per
     * instruction as the matcher counts, and per character read); each takes at least one
     * character, so 3 per character taken is charged at the end: an upper bound, which keeps
     * no count in the loop (kept, it lived on the stack: 3 instructions per iteration). */
    uint64_t cost;
    int r = 1;
    /* The word arm's range, or any span's where there is none (BLOOM's: never read). */
    const fbpe_rx_range16 w =
        fbpe_rx_range16_of(&p->spans[lp->word ? lp->arms[lp->word - FBPE_RX_V_ARM].take.atom : 0]);
    for (;;) {
        int how;
        size_t e;
#ifdef FBPE_RX_BLOCKS
        if (lp->blocks) {
            size_t read;
            pos = loop_blocks_from(&lp->block, s, pos, n, &read);
            SEEN(read);
        }
#endif
        pos = loop_tables(p, lp, w, s, pos, n, &how);
        SEEN(pos);
        if (how != LOOP_ASK) {
            if (how == LOOP_END_READS) SEEN(pos + 1);
            break;
        }
        if (pos >= n) break;
        r = loop_iteration(p, vm, lp, s, pos, n, &reach, &e);
        if (r <= 0) break;
        pos = e;
    }
    if (reach > vm->reach) vm->reach = reach;
    cost = 3 * (uint64_t)(pos - i);
    if (r >= 0 && vm->steps_left <= cost) r = -1;
    if (r < 0) {
        vm->steps_left = 0;
        if (vm->status == FBPE_OK) vm->status = FBPE_EPATTERN;
        return -1;
    }
    vm->steps_left -= cost;
    *end = pos;
    return pos > i;
}

/* run_fused where the matcher must decide: a guarded choice at the end may be taken (o200k's
 * contraction after a word). */
#define FUSED_UNDECIDED (-2)
/* run_fused where a run fell short after one that may give back: read and charged as
 * run_linear's failing steps are; the matcher tries the whole alternative next (give_back). */
#define FUSED_GIVE_BACK (-3)

/* The fused alternative L ([X?] Y{m,} [Z{k,}] [guarded choice], nothing else) at i, whose
 * first character has the atoms `here` and `len` bytes: run_linear's steps for these shapes,
 * without its loop, with the same reads, the same reach and the same charge. 1 with the
 * piece's end in *end, 0 where it does not match, -1 when the step budget runs out
 * (vm->status), FUSED_UNDECIDED (nothing read or charged) where run_linear would leave it to
 * the matcher where the guard holds: then piece_end_after runs the alternative as any other;
 * FUSED_GIVE_BACK where a run fell short after one that may give back, read and charged: the
 * matcher then tries the alternative whole, and the runs are not read a third time (a
 * Japanese clause is one o200k word: both of its case classes hold Lo, so the upper-case run
 * takes it all and the lower-case one finds nothing; with those runs read again by
 * run_linear, 1 MB of ja.txt cost 249.5M instructions, against 194.2M before words were
 * fused: benchmarks/callgrind_scan.py on ja.txt). `trusting` (a
 * constant): L is FUSED_GIVES or FUSED_GUARD, a greedy run taken whole on trust or a guarded
 * choice at its end (o200k's and tekken's words, `[^\r\n\p{L}\p{N}]?[\p{Lu}..]*[\p{Ll}..]+(?i:'s|..)?`);
 * the plain shapes are compiled without those tests, which cost gpt2, gpt4 and llama3 4-5%
 * more instructions (benchmarks/callgrind_scan.py) where they never run. */
static ALWAYS_INLINE int run_fused(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_linear *L,
                                   const uint8_t *s, size_t i, size_t n, uint64_t here, size_t len,
                                   size_t *end, int trusting) {
    const fbpe_rx_step *st = L->steps;
    size_t pos = i, e;
    int wide = 0, enough, took = 0;
    if (L->fused & FBPE_RX_FUSED_OPT) {
        if (here >> st->atom & 1) {
            pos = i + len;
            if (trusting) took = st->gives | (st->greedy & (len > 1));
        }
        st++;
    }
    if (pos == i && !(here >> st->atom & 1)) {
        e = i;
        enough = st->min == 0;
    } else {
        enough = star_run(p, st, s, pos, n, &e, &wide, 1);
        if (trusting) took |= (e > pos) & (st->gives | (st->greedy & wide));
    }
    /* Giving back what the second run took cannot help it reach its own minimum. */
    if (enough && (L->fused & FBPE_RX_FUSED_TAIL)) enough = star_run(p, st + 1, s, e, n, &e, &wide, 1);
    if (trusting) {
        if (enough && (L->fused & FBPE_RX_FUSED_GUARD) && e < n) {
            size_t l2;
            if (atoms_at(p, s, e, &l2) & p->guards[L->steps[L->num_steps - 1].min]) return FUSED_UNDECIDED;
        }
    }
    uint64_t cost = (uint64_t)(e - i) + L->num_steps;
    if (e > vm->reach) vm->reach = e;
    if (vm->steps_left <= cost) {
        vm->steps_left = 0;
        vm->status = FBPE_EPATTERN;
        return -1;
    }
    vm->steps_left -= cost;
    if (trusting && !enough && took) return FUSED_GIVE_BACK;
    *end = e;
    return enough && e > i;
}

static inline int is_trusting(const fbpe_rx_linear *L) {
    return (L->fused & (FBPE_RX_FUSED_GIVES | FBPE_RX_FUSED_GUARD)) != 0;
}

/* fbpe_rx_piece_end past the alternatives in `tried`, which the first character begins and
 * which its fast path has found not to match. A function of its own: its frame (the
 * matcher's state, every kind of alternative) is what the fast path does not pay for. */
NOINLINE static size_t piece_end_after(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i,
                                       size_t n, uint64_t tried) {
    uint64_t alts, here, next = 0;
    size_t len;
    int next_read = 0;
    if (s[i] < 0x80) {
        alts = p->ascii_alts[s[i]];
        here = p->ascii_masks[s[i]];
        len = 1;
    } else {
        uint8_t kind = class_of(p, fbpe_utf8_decode(s, i, &len));
        alts = p->alts[kind];
        here = p->masks[kind];
    }
    alts &= ~tried;
    /* The alternatives that this character can begin, in order: the first that matches. */
    while (alts) {
        uint32_t k = (uint32_t)__builtin_ctzll(alts);
        alts &= alts - 1;
        const uint64_t opt = p->heads[2 * k], after = p->heads[2 * k + 1];
        if (opt && !(here & after) &&
            !optional_head_fits(p, vm, s, i, len, n, here, opt, after, &next, &next_read))
            continue;
        const fbpe_rx_linear *L = &p->linear[k];
        size_t e, from = i;
        uint32_t pc = p->starts[k];
        int trusted = 0, r;
        if (L->loop) {
            r = run_loop(p, vm, &p->loops[L->loop - 1], s, i, n, &e);
            if (r > 0) return e;
            if (r < 0) return i;
            continue;
        }
        if (L->single) {
            /* One character of one atom (` ` of the Functionalizer's patterns, a final \s):
             * decided by the first character's atoms, as the matcher's ATOM would. */
            if (vm->reach < i) vm->reach = i;
            if (!(here >> L->steps[0].atom & 1)) continue;
            if (vm->steps_left <= 2) {
                vm->steps_left = 0;
                vm->status = FBPE_EPATTERN;
                return i;
            }
            vm->steps_left -= 2;
            return i + len;
        }
        r = FUSED_UNDECIDED;
        if (L->fused)
            r = is_trusting(L) ? run_fused(p, vm, L, s, i, n, here, len, &e, 1)
                               : run_fused(p, vm, L, s, i, n, here, len, &e, 0);
        if (r != FUSED_UNDECIDED && r != FUSED_GIVE_BACK) {
            if (r > 0) return e;
            if (r < 0) return i;
            continue;
        }
        if (r == FUSED_UNDECIDED && L->num_steps) {
            uint32_t resume;
            r = run_linear(p, vm, L, s, i, n, here, len, &from, &resume, &trusted);
            if (r < 0) return i;
            if (r > 0 && resume == L->next && L->matches) {
                /* Empty: every run took nothing, so none can give back; findall wants a
                 * non-empty match here. */
                if (from > i) return from;
                continue;
            }
            if (r > 0) {
                /* The matcher goes on from there; what it finds first is regex's. */
                r = run(p, vm, resume, from, s, i, n, &e, 0);
                if (r > 0) return e;
                if (r < 0) return i;
            }
            if (!trusted) continue; /* no choice was left behind: the alternative fails */
            /* A greedy step must give back: the matcher tries the whole alternative. */
        }
        r = run(p, vm, pc, i, s, i, n, &e, 0);
        if (r > 0) return e;
        if (r < 0) return i;
    }
    vm->status = FBPE_EPATTERN; /* no non-empty match here: regex would drop this character */
    return i;
}

/* After FUSED_GIVE_BACK from the alternative of ascii_fast entry f: the matcher tries it whole
 * from i, as piece_end_after does: 1 with the piece's end in *end, 0 or -1. */
static int give_back(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i, size_t n,
                     unsigned f, size_t *end) {
    return run(p, vm, p->starts[(f & FBPE_RX_FAST_ALT) - 1], i, s, i, n, end, 0);
}

/* The fused alternative of ascii_fast entry f at i (ASCII), as piece_end_after's loop runs
 * it: run_fused's answer. */
static ALWAYS_INLINE int fast_alternative(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i,
                                          size_t n, unsigned f, size_t *end, int trusting) {
    uint32_t k = (f & FBPE_RX_FAST_ALT) - 1;
    if (f & FBPE_RX_FAST_HEAD) {
        /* optional_head_fits, the character being X: can Y take the next one? */
        if (i + 1 >= n) {
            if (vm->reach < n) vm->reach = n;
            return 0;
        }
        if (vm->reach < i + 1) vm->reach = i + 1;
        size_t l2;
        if (!(atoms_at(p, s, i + 1, &l2) & p->heads[2 * k + 1])) return 0;
    }
    return run_fused(p, vm, &p->linear[k], s, i, n, p->ascii_masks[s[i]], 1, end, trusting);
}

/* fbpe_rx_piece_end after the first fused alternative of the character at i failed: the
 * others of its list, then piece_end_after. */
NOINLINE static size_t piece_end_fast_rest(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s,
                                           size_t i, size_t n) {
    const uint16_t *fast = p->ascii_fast[s[i]];
    uint64_t tried = (uint64_t)1 << ((fast[0] & FBPE_RX_FAST_ALT) - 1);
    for (unsigned j = 1; j < FBPE_RX_MAX_FAST && fast[j]; j++) {
        size_t e;
        int r = fast[j] & FBPE_RX_FAST_TRUSTING ? fast_alternative(p, vm, s, i, n, fast[j], &e, 1)
                                                : fast_alternative(p, vm, s, i, n, fast[j], &e, 0);
        if (r == FUSED_UNDECIDED) break;
        if (r == FUSED_GIVE_BACK) r = give_back(p, vm, s, i, n, fast[j], &e);
        if (r > 0) return e;
        if (r < 0) return i;
        tried |= (uint64_t)1 << ((fast[j] & FBPE_RX_FAST_ALT) - 1);
    }
    return piece_end_after(p, vm, s, i, n, tried);
}

/* Most pieces of prose start with an ASCII character whose first alternatives are fused
 * (` ?\p{L}+`, `[^\r\n\p{L}\p{N}]?+\p{L}+`, then ` ?[^\s\p{L}\p{N}]++[\r\n]*` for a
 * comma): the table says which, and for each whether its optional head needs the next
 * character (the character being that head), so that they run as piece_end_after's loop
 * would run them -- the same reads, reach and charge -- without the loop, the tests of the
 * other kinds of alternative or their frame. The first is tried here, with the few registers
 * it needs; the others out of line. On 1 MB of English prose with gpt4's pattern
 * (benchmarks/callgrind_scan.py), scan+count went from 82.3M instructions to 77.3M (with all
 * of them in the loop: 79.5M). */
NOINLINE static size_t piece_end_fast(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i,
                                      size_t n) {
    size_t e;
    int r = fast_alternative(p, vm, s, i, n, p->ascii_fast[s[i]][0], &e, 0);
    if (r > 0) return e;
    if (r < 0) return i;
    return piece_end_fast_rest(p, vm, s, i, n);
}

/* piece_end_fast where the first fused alternative is trusting (run_fused): o200k's words. */
NOINLINE static size_t piece_end_trusting(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s,
                                          size_t i, size_t n) {
    size_t e;
    int r = fast_alternative(p, vm, s, i, n, p->ascii_fast[s[i]][0], &e, 1);
    if (r > 0) return e;
    if (r == FUSED_UNDECIDED) return piece_end_after(p, vm, s, i, n, 0);
    if (r == FUSED_GIVE_BACK && (r = give_back(p, vm, s, i, n, p->ascii_fast[s[i]][0], &e)) > 0) return e;
    if (r < 0) return i;
    return piece_end_fast_rest(p, vm, s, i, n);
}

/* Two tests and a jump: a character without a fast path (a digit, a line break) costs about
 * what it did before there was one (the test inline in the callers cost 2.4M instructions
 * per MB of o200k, the fast path in this function's frame 3.4M). The test for a trusting
 * first alternative here costs gpt2 and gpt4 about 1% (benchmarks/callgrind_scan.py); made
 * in piece_end_fast it cost them 2.5%, and with the trusting lists in a table of their own,
 * 2%. */
size_t fbpe_rx_piece_end_general(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i, size_t n) {
    if (s[i] < 0x80 && p->ascii_fast[s[i]][0])
        return p->ascii_fast[s[i]][0] & FBPE_RX_FAST_TRUSTING ? piece_end_trusting(p, vm, s, i, n)
                                                              : piece_end_fast(p, vm, s, i, n);
    return piece_end_after(p, vm, s, i, n, 0);
}

/* Does s[0..c), as a text of its own, cut into the pieces ends[j..k] from `from` on? */
static int same_alone(const fbpe_rx *p, const uint8_t *s, size_t c, size_t from, const size_t *ends,
                      size_t j, size_t k, fbpe_status *status) {
    fbpe_rx_vm vm;
    int same = 1;
    fbpe_rx_vm_init(&vm, c);
    for (size_t i = from; same && j <= k; j++) {
        size_t e = fbpe_rx_piece_end_reach(p, &vm, s, i, c);
        same = e == ends[j];
        i = e;
    }
    if (vm.status == FBPE_ENOMEM) *status = FBPE_ENOMEM;
    fbpe_rx_vm_free(&vm);
    return same;
}

/* How many candidate cuts are checked, from the last one back, before giving up. */
#define SAFE_CUT_TRIES 16

size_t fbpe_rx_safe_cut(const fbpe_rx *p, const uint8_t *s, size_t n, size_t hi,
                        fbpe_status *status) {
    /* Two conditions make a cut at a piece end c safe.
     * (a) Every piece up to c was found without reading at or past n: those are the pieces
     *     of any text that starts with s[0..n), the whole file included.
     * (b) s[0..c) cut on its own gives the same pieces: a piece whose search read at c or
     *     past it (a run stopped by s[c], \s+(?!\S) looking at s[c]) might end elsewhere
     *     where the text ends at c. Only the last few pieces can have read that far (the
     *     reach is monotone), so only they are cut again, in a text that ends at c.
     * The pieces after c are then those of the text from c on, since a match reads nothing
     * before where it starts (no look-behind; no ^, which the caller excludes). */
    fbpe_rx_vm vm;
    size_t *ends = NULL, *reach = NULL, count = 0, cap = 0, i = 0, best = 0;
    *status = FBPE_OK;
    fbpe_rx_vm_init(&vm, n);
    while (i < n) {
        size_t e = fbpe_rx_piece_end_reach(p, &vm, s, i, n);
        if (e == i || vm.reach >= n || e > hi) break;
        if (count == cap) {
            size_t grown_cap = fbpe_grow_to(cap, 256, count + 1, sizeof(size_t));
            size_t *e2 = grown_cap ? realloc(ends, grown_cap * sizeof(size_t)) : NULL;
            if (e2) ends = e2;
            size_t *r2 = e2 ? realloc(reach, grown_cap * sizeof(size_t)) : NULL;
            if (r2) reach = r2;
            if (!e2 || !r2) {
                *status = FBPE_ENOMEM;
                break;
            }
            cap = grown_cap;
        }
        ends[count] = e;
        reach[count] = vm.reach;
        count++;
        i = e;
    }
    if (vm.status == FBPE_ENOMEM) *status = FBPE_ENOMEM;
    fbpe_rx_vm_free(&vm);
    for (size_t tries = 0; *status == FBPE_OK && tries < SAFE_CUT_TRIES && tries < count; tries++) {
        size_t k = count - 1 - tries, c = ends[k], j = k + 1;
        while (j > 0 && reach[j - 1] >= c) j--; /* pieces j..k read at c or past it */
        if (j > k || same_alone(p, s, c, j ? ends[j - 1] : 0, ends, j, k, status)) {
            best = c;
            break;
        }
    }
    free(ends);
    free(reach);
    return *status == FBPE_OK ? best : 0;
}

fbpe_status fbpe_rx_check(const fbpe_rx *p) {
    if (!p->num_code || !p->num_alts || p->num_alts > 64 || !p->num_classes || !p->num_blocks)
        return FBPE_EINVALID;
    for (uint32_t k = 0; k < p->num_alts; k++)
        if (p->starts[k] >= p->num_code) return FBPE_EINVALID;
    for (uint32_t pc = 0; pc < p->num_code; pc++) {
        const fbpe_rx_ins *in = &p->code[pc];
        switch (in->op) {
        case FBPE_RX_ATOM:
        case FBPE_RX_RUN_GREEDY:
        case FBPE_RX_RUN_LAZY:
        case FBPE_RX_RUN_POSSESSIVE:
            if (in->a >= 64 || (in->op != FBPE_RX_ATOM && in->c < in->b)) return FBPE_EINVALID;
            if (pc + 1 >= p->num_code) return FBPE_EINVALID;
            break;
        case FBPE_RX_SPLIT:
            if (in->a >= p->num_code || in->b >= p->num_code || in->c > p->num_guards)
                return FBPE_EINVALID;
            break;
        case FBPE_RX_JMP:
            if (in->a >= p->num_code) return FBPE_EINVALID;
            break;
        case FBPE_RX_LOOK:
            if (in->b >= p->num_code || in->b <= pc + 1 || in->a > 1) return FBPE_EINVALID;
            break;
        case FBPE_RX_LOOK_ATOM:
            if (in->a > 1 || in->b >= 64 || pc + 1 >= p->num_code) return FBPE_EINVALID;
            break;
        case FBPE_RX_MATCH:
        case FBPE_RX_LOOK_END:
            break;
        case FBPE_RX_BEGIN:
        case FBPE_RX_EOL:
        case FBPE_RX_END:
        case FBPE_RX_ATOMIC:
        case FBPE_RX_ATOMIC_END:
            if (pc + 1 >= p->num_code) return FBPE_EINVALID;
            break;
        default:
            return FBPE_EINVALID;
        }
    }
    for (uint32_t k = 0; k < 0x1100; k++)
        if (p->index[k] >= p->num_blocks) return FBPE_EINVALID;
    for (size_t k = 0; k < (size_t)p->num_blocks * 256; k++)
        if (p->blocks[k] >= p->num_classes) return FBPE_EINVALID;
    return FBPE_OK;
}

/* How runs of atom a read ASCII (fbpe_rx_span): from its members among the 128 ASCII
 * characters. On English prose o200k's lower-case run [\p{Ll}\p{Lm}\p{Lo}\p{M}] (ASCII a-z)
 * read byte by byte cost about 10 instructions a byte; as a range, 8 bytes in about 12. */
static fbpe_rx_span span_of(const fbpe_rx *p, uint32_t a) {
    fbpe_rx_span sp;
    memset(&sp, 0, sizeof sp);
    int lo = -1, hi = -1, gaps = 0, letters = 1;
    for (int c = 0; c < 128; c++) {
        int in = (int)(p->ascii_masks[c] >> a & 1);
        int letter = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
        if (in != letter) letters = 0;
        if (!in) continue;
        if (lo < 0) lo = c;
        else if (c != hi + 1) gaps = 1;
        hi = c;
    }
    const uint64_t ones = 0x0101010101010101ull;
    if (letters) {
        sp.kind = FBPE_RX_ASCII_RANGE;
        sp.fold8 = 0x20;
        sp.lo = 'a';
        sp.hi = 'z';
    } else if (lo >= 0 && !gaps) {
        sp.kind = FBPE_RX_ASCII_RANGE;
        sp.lo = (uint8_t)lo;
        sp.hi = (uint8_t)hi;
    } else if (p->ascii_masks[' '] >> a & 1) {
        sp.kind = FBPE_RX_ASCII_SPACES;
    }
    sp.fold = ones * sp.fold8;
    sp.add_lo = ones * (uint64_t)(0x80 - sp.lo);
    sp.add_hi = ones * (uint64_t)(0x7F - sp.hi);
    memset(sp.fold16, sp.fold8, sizeof sp.fold16);
    memset(sp.bias16, fbpe_rx_bias16(sp.lo), sizeof sp.bias16);
    memset(sp.limit16, fbpe_rx_limit16(sp.lo, sp.hi), sizeof sp.limit16);
    return sp;
}

/* No character belongs to both atoms a and b. */
static int disjoint(const fbpe_rx *p, uint32_t a, uint32_t b) {
    for (uint32_t c = 0; c < p->num_classes; c++)
        if (p->masks[c] >> a & 1 && p->masks[c] >> b & 1) return 0;
    for (int c = 0; c < 128; c++)
        if (p->ascii_masks[c] >> a & 1 && p->ascii_masks[c] >> b & 1) return 0;
    return 1;
}

/* Marks the greedy steps of L that are futile (fbpe_rx_step): where one gives back to a
 * place p, the character at p is one it took; if every step after it up to one that must
 * take a character can take none of that character's kind, all of them fail at p, whatever
 * they choose, so no path that gives back there matches. The first path that gives back
 * at all gives back in the earliest such step, whose run started where the straight-line
 * path's did. Checked for ASCII characters only (o200k's case classes share Lm, Lo and M);
 * the steps say at run time whether what they took was ASCII. */
static void set_futile(const fbpe_rx *p, fbpe_rx_linear *L) {
    for (uint32_t t = 0; t < L->num_steps; t++) {
        fbpe_rx_step *st = &L->steps[t];
        uint64_t first = 0;
        int required = 0;
        st->futile = 0;
        st->gives = st->greedy;
        if (!st->greedy) continue;
        for (uint32_t u = t + 1; u < L->num_steps && !required; u++) {
            const fbpe_rx_step *nx = &L->steps[u];
            if (nx->kind == FBPE_RX_STEP_GUARD) break; /* the matcher's: not known here */
            if (nx->kind == FBPE_RX_STEP_LOOK || nx->kind == FBPE_RX_STEP_EOL || nx->kind == FBPE_RX_STEP_END)
                continue; /* they take nothing; one that fails only helps */
            first |= (uint64_t)1 << nx->atom;
            required = nx->min > 0;
        }
        if (!required) continue;
        st->futile = 1;
        for (int c = 0; c < 128; c++)
            if (p->ascii_masks[c] >> st->atom & 1 && p->ascii_masks[c] & first) st->futile = 0;
        st->gives = !st->futile;
    }
}

/* FBPE_RX_FUSED_* of L, or 0: [OPT] STAR [STAR] [GUARD], every run unbounded, then MATCH.
 * A greedy step is run_fused's to track: where one took what it may give back and a later
 * run falls short, or where the guard holds, the matcher decides. */
static uint32_t fused_shape(const fbpe_rx_linear *L) {
    const fbpe_rx_step *st = L->steps, *const last = L->steps + L->num_steps;
    uint32_t shape = FBPE_RX_FUSED_RUN;
    if (!L->matches || !L->num_steps) return 0;
    if (st->kind == FBPE_RX_STEP_OPT) {
        shape |= FBPE_RX_FUSED_OPT;
        st++;
    }
    if (st == last || st->kind != FBPE_RX_STEP_STAR) return 0;
    st++;
    if (st < last && st->kind == FBPE_RX_STEP_STAR) {
        shape |= FBPE_RX_FUSED_TAIL;
        st++;
    }
    if (st < last && st->kind == FBPE_RX_STEP_GUARD) {
        shape |= FBPE_RX_FUSED_GUARD;
        st++;
    }
    if (L->trusts) shape |= FBPE_RX_FUSED_GIVES;
    return st == last ? shape : 0;
}

/* Does the code at pc end what is being walked: MATCH for an alternative; for an alternative
 * of a look-ahead's body (end: its LOOK_END), that LOOK_END or a jump to it. */
static int ends_at(const fbpe_rx *p, uint32_t pc, uint32_t end) {
    if (end == FBPE_RX_INF) return p->code[pc].op == FBPE_RX_MATCH;
    /* A look-ahead asks only whether its body matches: runs that may take nothing before
     * its end cannot make it fail (` ?[^\s\p{L}\p{N}]{2,}` decides `[\r\n/]*` after it). */
    while (pc < end && (p->code[pc].op == FBPE_RX_RUN_GREEDY || p->code[pc].op == FBPE_RX_RUN_POSSESSIVE ||
                        p->code[pc].op == FBPE_RX_RUN_LAZY) && p->code[pc].b == 0)
        pc++;
    const fbpe_rx_ins *in = &p->code[pc];
    return pc == end || (in->op == FBPE_RX_JMP && in->a == end);
}

/* The straight-line steps of the code from pc (fbpe_rx_linear), up to `end` (ends_at). */
static void walk_steps(const fbpe_rx *p, uint32_t pc, uint32_t end, fbpe_rx_linear *L) {
    memset(L, 0, sizeof *L);
    for (; L->num_steps < FBPE_RX_MAX_STEPS; pc++) {
        const fbpe_rx_ins *in = &p->code[pc];
        fbpe_rx_step *st = &L->steps[L->num_steps];
        memset(st, 0, sizeof *st);
        if (ends_at(p, pc, end)) break;
        if (in->op == FBPE_RX_RUN_GREEDY && in->c == FBPE_RX_INF && in[1].op == FBPE_RX_LOOK_ATOM &&
            in[1].a == 1 && pc + 2 < p->num_code && ends_at(p, pc + 2, end) &&
            disjoint(p, in->a, in[1].b)) {
            /* X{min,}(?!Y) and the end: where Y stopped the run, giving back one
             * character (an X, so no Y) makes the look-ahead hold, and the match ends
             * there; fewer would be no use, since regex takes the first that works. */
            st->kind = FBPE_RX_STEP_RUN_NOT;
            st->atom = (uint8_t)in->a;
            st->look = (uint8_t)in[1].b;
            st->min = in->b;
            st->max = FBPE_RX_INF;
            st->ascii = p->spans[in->a].kind;
            L->num_steps++;
            pc++; /* the look-ahead too */
            continue;
        }
        int trust = in->op == FBPE_RX_RUN_GREEDY && !ends_at(p, pc + 1, end);
        if (trust) {
            /* Taken whole on trust only before a character or a run of an atom, or a
             * guarded choice, that shares no ASCII character with it (fbpe_rx_linear). */
            const fbpe_rx_ins *nx = &in[1];
            uint64_t follows = 0;
            if (nx->op == FBPE_RX_ATOM || nx->op == FBPE_RX_RUN_GREEDY || nx->op == FBPE_RX_RUN_POSSESSIVE)
                follows = (uint64_t)1 << nx->a;
            else if (nx->op == FBPE_RX_SPLIT && nx->c) /* an optional group: (?i:'s|'t..)? */
                follows = p->guards[nx->c - 1];
            trust = follows != 0;
            for (int c = 0; trust && c < 128; c++)
                if (p->ascii_masks[c] >> in->a & 1 && p->ascii_masks[c] & follows) trust = 0;
            if (!trust) break;
        }
        if (in->op == FBPE_RX_ATOM || in->op == FBPE_RX_RUN_POSSESSIVE || in->op == FBPE_RX_RUN_GREEDY) {
            st->greedy = (uint8_t)trust;
            L->trusts |= (uint32_t)trust;
            /* fbpe_rx_check: a run is never the last instruction, and max >= min. */
            uint32_t min = in->op == FBPE_RX_ATOM ? 1 : in->b;
            uint32_t max = in->op == FBPE_RX_ATOM ? 1 : in->c;
            st->atom = (uint8_t)in->a;
            st->min = min;
            st->max = max;
            if (min == 1 && max == 1) {
                st->kind = FBPE_RX_STEP_ONE;
            } else if (min == 0 && max == 1) {
                st->kind = FBPE_RX_STEP_OPT;
            } else if (max == FBPE_RX_INF) {
                st->kind = FBPE_RX_STEP_STAR;
                st->ascii = p->spans[in->a].kind;
            } else {
                st->kind = FBPE_RX_STEP_RANGE;
            }
        } else if (in->op == FBPE_RX_SPLIT && in->c) {
            st->kind = FBPE_RX_STEP_GUARD;
            st->min = in->c - 1;
            st->max = pc;
            pc = in->b - 1; /* the walk goes on at the second arm (the loop adds one) */
        } else if (in->op == FBPE_RX_LOOK_ATOM) {
            st->kind = FBPE_RX_STEP_LOOK;
            st->atom = (uint8_t)in->b;
            st->negate = (uint8_t)in->a;
        } else if (in->op == FBPE_RX_EOL) {
            st->kind = FBPE_RX_STEP_EOL;
        } else if (in->op == FBPE_RX_END) {
            st->kind = FBPE_RX_STEP_END;
        } else {
            break;
        }
        L->num_steps++;
    }
    L->next = pc;
    set_futile(p, L);
    L->matches = (uint32_t)ends_at(p, pc, end);
    L->single = end == FBPE_RX_INF && L->matches && L->num_steps == 1 && L->steps[0].kind == FBPE_RX_STEP_ONE;
    L->fused = end == FBPE_RX_INF ? fused_shape(L) : 0;
}

/* The look-ahead at pc as alternatives (fbpe_rx_look): 1 + its index in p->looks, or 0 where
 * there is no room. Its body is split at each greedy choice whose first arm runs up to the
 * look-ahead's end (A|B|C); each part is then tried on its own, in order, and the body
 * matches where one of them does. */
static uint32_t look_of(fbpe_rx *p, uint32_t pc) {
    for (uint32_t k = 0; k < p->num_looks; k++)
        if (p->looks[k].pc == pc) return k + 1;
    if (p->num_looks == FBPE_RX_MAX_LOOKS) return 0;
    const uint32_t end = p->code[pc].b - 1; /* its LOOK_END (fbpe_rx_check: b > pc + 1) */
    if (p->code[end].op != FBPE_RX_LOOK_END) return 0;
    const uint32_t first = p->num_subs;
    uint32_t at = pc + 1;
    for (;;) {
        const fbpe_rx_ins *in = &p->code[at];
        uint32_t next = 0;
        if (p->num_subs == FBPE_RX_MAX_SUBS) {
            p->num_subs = first;
            return 0;
        }
        fbpe_rx_sub *sb = &p->subs[p->num_subs++];
        memset(sb, 0, sizeof *sb);
        if (in->op == FBPE_RX_SPLIT && in->a == at + 1 && in->b > at + 1 && in->b <= end &&
            p->code[in->b - 1].op == FBPE_RX_JMP && p->code[in->b - 1].a == end) {
            sb->start = at + 1;
            sb->guard = in->c ? p->guards[in->c - 1] : 0;
            next = in->b;
        } else {
            sb->start = at;
        }
        const fbpe_rx_ins *x = &p->code[sb->start];
        if ((x->op == FBPE_RX_RUN_GREEDY || x->op == FBPE_RX_RUN_POSSESSIVE) && x->b == 0 && x->c == 1 &&
            (x[1].op == FBPE_RX_ATOM ||
             ((x[1].op == FBPE_RX_RUN_GREEDY || x[1].op == FBPE_RX_RUN_POSSESSIVE) && x[1].b >= 1))) {
            sb->opt = (uint64_t)1 << x->a;
            sb->after = (uint64_t)1 << x[1].a;
        }
        walk_steps(p, sb->start, end, &sb->L);
        const fbpe_rx_step *st0 = &sb->L.steps[0];
        if (!sb->guard && sb->L.num_steps && st0->kind != FBPE_RX_STEP_LOOK && st0->kind != FBPE_RX_STEP_EOL &&
            st0->kind != FBPE_RX_STEP_END && st0->kind != FBPE_RX_STEP_GUARD && st0->min >= 1)
            sb->guard = (uint64_t)1 << st0->atom; /* it must begin with a character of its first step */
        if (!next) break;
        at = next;
    }
    fbpe_rx_look *lk = &p->looks[p->num_looks++];
    lk->pc = pc;
    lk->first = first;
    lk->count = p->num_subs - first;
    return p->num_looks;
}

/* The arm of a loop from pc to end (exclusive): look-aheads, then one atom or one run of at
 * least one character. 0 if it is not of that shape. */
static int arm_of(fbpe_rx *p, uint32_t pc, uint32_t end, fbpe_rx_arm *arm) {
    memset(arm, 0, sizeof *arm);
    while (pc < end && (p->code[pc].op == FBPE_RX_LOOK_ATOM || p->code[pc].op == FBPE_RX_LOOK)) {
        const fbpe_rx_ins *in = &p->code[pc];
        if (arm->num_tests == FBPE_RX_MAX_TESTS) return 0;
        arm->test_negate[arm->num_tests] = (uint8_t)in->a;
        if (in->op == FBPE_RX_LOOK_ATOM) {
            arm->test_atom[arm->num_tests] = (uint8_t)in->b;
            pc++;
        } else {
            uint32_t k = look_of(p, pc);
            if (!k) return 0;
            arm->test_look[arm->num_tests] = (uint8_t)k;
            pc = in->b;
        }
        arm->num_tests++;
    }
    if (pc + 1 != end) return 0;
    const fbpe_rx_ins *in = &p->code[pc];
    fbpe_rx_step *st = &arm->take;
    st->atom = (uint8_t)in->a;
    if (in->op == FBPE_RX_ATOM) {
        st->kind = FBPE_RX_STEP_ONE;
        st->min = st->max = 1;
    } else if ((in->op == FBPE_RX_RUN_GREEDY || in->op == FBPE_RX_RUN_POSSESSIVE) && in->b >= 1) {
        /* Greedy or not, a run is never given back here (fbpe_rx_loop). */
        st->kind = in->c == FBPE_RX_INF ? FBPE_RX_STEP_STAR : FBPE_RX_STEP_RANGE;
        st->min = in->b;
        st->max = in->c;
        st->ascii = p->spans[in->a].kind;
    } else {
        return 0;
    }
    return 1;
}

/* The arms of the loop body from pc up to `end`, the loop's closing JMP (fbpe_rx_loop). */
static int arms_of(fbpe_rx *p, uint32_t pc, uint32_t end, fbpe_rx_loop *lp) {
    lp->num_arms = 0;
    for (;;) {
        const fbpe_rx_ins *in = &p->code[pc];
        if (lp->num_arms == FBPE_RX_MAX_ARMS) return 0;
        if (in->op == FBPE_RX_SPLIT && in->a == pc + 1 && in->b > pc + 2 && in->b <= end &&
            p->code[in->b - 1].op == FBPE_RX_JMP && p->code[in->b - 1].a == end) {
            if (!arm_of(p, pc + 1, in->b - 1, &lp->arms[lp->num_arms++])) return 0;
            pc = in->b;
            continue;
        }
        return arm_of(p, pc, end, &lp->arms[lp->num_arms++]);
    }
}

/* Is the alternative from pc a loop of arms (fbpe_rx_loop)? Then 1 + its index in p->loops. */
static uint32_t loop_of(fbpe_rx *p, uint32_t pc, uint32_t limit) {
    const fbpe_rx_ins *code = p->code;
    uint32_t looks = p->num_looks, subs = p->num_subs;
    int atomic = code[pc].op == FBPE_RX_ATOMIC;
    uint32_t body = pc + (uint32_t)atomic, split = 0;
    if (p->num_loops == FBPE_RX_MAX_LOOPS) return 0;
    /* The loop's SPLIT: at the start (B*), or after one copy of its body (B+), the same
     * instructions moved by the length of that copy. */
    for (uint32_t at = body; at < limit && !split; at++) {
        const fbpe_rx_ins *in = &code[at];
        if (in->op != FBPE_RX_SPLIT || in->a != at + 1 || in->b <= at + 2 || in->b > limit ||
            code[in->b - 1].op != FBPE_RX_JMP || code[in->b - 1].a != at)
            continue;
        uint32_t copy = at - body, delta = at + 1 - body;
        if (copy && copy != in->b - 1 - (at + 1)) continue;
        int same = 1;
        for (uint32_t t = 0; same && t < copy; t++) {
            const fbpe_rx_ins *x = &code[body + t], *y = &code[at + 1 + t];
            /* Targets: SPLIT's a and b, JMP's a, LOOK's b. */
            int moves_a = x->op == FBPE_RX_SPLIT || x->op == FBPE_RX_JMP;
            int moves_b = x->op == FBPE_RX_SPLIT || x->op == FBPE_RX_LOOK;
            same = x->op == y->op && x->c == y->c && y->a == x->a + (moves_a ? delta : 0) &&
                   y->b == x->b + (moves_b ? delta : 0);
        }
        if (same) split = at;
    }
    if (!split) return 0;
    uint32_t after = code[split].b; /* the way out of the loop */
    if (atomic && code[after++].op != FBPE_RX_ATOMIC_END) return 0;
    if (code[after].op != FBPE_RX_MATCH) return 0;
    fbpe_rx_loop *lp = &p->loops[p->num_loops];
    if (!arms_of(p, split + 1, code[split].b - 1, lp)) {
        p->num_looks = looks; /* what it registered is not used */
        p->num_subs = subs;
        return 0;
    }
    return ++p->num_loops;
}

/* Which pairs of ASCII characters decide look-ahead lk whatever follows them (fbpe_rx.pairs):
 * its body is run on the text "ab" alone, and where it read neither past b nor whether the
 * text ends after b, every text that goes on with a b decides it the same way, since a
 * look-ahead reads nothing before where it stands (^ in its body: no table). On SuperBPE's
 * stage two the look-ahead at every space before a word and every comma before a space is
 * then one table test: the look-ahead's alternatives cost about 60 instructions there. */
static void look_pairs(fbpe_rx *p, fbpe_rx_look *lk, uint32_t k) {
    const uint32_t end = p->code[lk->pc].b;
    lk->pairs = 0;
    for (uint32_t pc = lk->pc + 1; pc < end; pc++)
        if (p->code[pc].op == FBPE_RX_BEGIN) return;
    for (int a = 0; a < 128; a++) {
        for (int b = 0; b < 128; b++) {
            const uint8_t text[2] = {(uint8_t)a, (uint8_t)b};
            fbpe_rx_vm vm;
            fbpe_rx_vm_init(&vm, 2);
            int r = look_body(p, &vm, lk, text, 0, 2, p->ascii_masks[a], 1);
            p->pairs[k][a][b] = (uint8_t)(r >= 0 && vm.status == FBPE_OK && vm.reach < 2 ? 1 + (r > 0) : 0);
            fbpe_rx_vm_free(&vm);
        }
    }
    lk->pairs = k + 1;
}

/* Is the arm's step a run that FBPE_RX_V_RUN marks? (min <= 1: a run that begins at a
 * character of its atom is long enough.) */
static int arm_runs(const fbpe_rx_arm *arm) {
    return arm->take.kind == FBPE_RX_STEP_STAR && arm->take.ascii == FBPE_RX_ASCII_RANGE &&
           arm->take.min <= 1;
}

/* FBPE_RX_V_* of an iteration that takes arm k of loop lp (loop_verdict, loop_triple). */
static uint8_t arm_taken(const fbpe_rx_loop *lp, uint32_t k) {
    const fbpe_rx_arm *arm = &lp->arms[k];
    return (uint8_t)((FBPE_RX_V_ARM + k) | (arm->take.kind == FBPE_RX_STEP_ONE ? FBPE_RX_V_ONE : 0) |
                     (arm_runs(arm) ? FBPE_RX_V_RUN : 0) |
                     (FBPE_RX_V_ARM + k == lp->word ? FBPE_RX_V_WORD : 0));
}

/* How loop_verdict and loop_triple decide a look-ahead test: 1 or 0 (whether its body
 * matches), or -1 where they cannot say. */
typedef struct {
    int a, b, c;       /* the characters; b < 0: a alone (loop_verdict), or b is `wide` */
    const uint8_t *wide; /* loop_wide_verdict: the UTF-8 of a character beyond ASCII */
    size_t wide_len;
    int pair_asked;    /* loop_verdict: b < 0 and a pair table would decide */
    size_t reads;      /* loop_verdict: 1 where a pair table decided; loop_triple: the reach */
    int by_body;       /* loop_triple: a look-ahead no pair table decides runs on "abc" */
} arm_looks;

/* Look-ahead lk's body run on text[0..n) alone: 1 or 0, where it read nothing at or past
 * offset `below` (so any text that begins so decides alike), else -1; at->reads is raised to
 * what it read. */
static int look_on_text(const fbpe_rx *p, const fbpe_rx_look *lk, uint64_t here, const uint8_t *text,
                        size_t n, size_t below, arm_looks *at) {
    fbpe_rx_vm vm;
    fbpe_rx_vm_init(&vm, n);
    int holds = look_body(p, &vm, lk, text, 0, n, here, 1);
    int decided = holds >= 0 && vm.status == FBPE_OK && vm.reach < below;
    if (vm.reach > at->reads) at->reads = vm.reach;
    fbpe_rx_vm_free(&vm);
    return decided ? holds : -1;
}

static int look_holds(const fbpe_rx *p, const fbpe_rx_look *lk, uint64_t here, arm_looks *at) {
    uint8_t known = lk->pairs && at->b >= 0 ? p->pairs[lk->pairs - 1][at->a][at->b] : 0;
    if (known) {
        if (at->reads < 1) at->reads = 1;
        return known - 1;
    }
    if (at->wide) { /* decided where the body read nothing past the wide character's start */
        uint8_t text[5] = {(uint8_t)at->a};
        memcpy(text + 1, at->wide, at->wide_len);
        return look_on_text(p, lk, here, text, 1 + at->wide_len, 2, at);
    }
    if (!at->by_body) {
        at->pair_asked = lk->pairs && at->b < 0;
        return -1;
    }
    const uint8_t text[3] = {(uint8_t)at->a, (uint8_t)at->b, (uint8_t)at->c};
    return look_on_text(p, lk, here, text, 3, 3, at);
}

/* The arms of loop lp tried in order at ASCII character at->a, as run_loop tries them: the
 * number of the arm taken, lp->num_arms where none is (the loop ends), or -1 where that is
 * not decided (an arm is a run of bounded length, or look_holds cannot say). */
static int arm_walk(const fbpe_rx *p, const fbpe_rx_loop *lp, arm_looks *at) {
    const uint64_t here = p->ascii_masks[at->a];
    for (uint32_t k = 0; k < lp->num_arms; k++) {
        const fbpe_rx_arm *arm = &lp->arms[k];
        if (!(here >> arm->take.atom & 1)) continue;
        if (arm->take.kind == FBPE_RX_STEP_RANGE) return -1;
        int ok = 1;
        for (uint32_t t = 0; ok && t < arm->num_tests; t++) {
            int holds = arm->test_look[t]
                            ? look_holds(p, &p->looks[arm->test_look[t] - 1], here, at)
                            : (int)(here >> arm->test_atom[t] & 1);
            if (holds < 0) return -1;
            ok = holds != arm->test_negate[t];
        }
        if (ok) return (int)k;
    }
    return (int)lp->num_arms;
}

/* FBPE_RX_V_* of arm_walk's answer k >= 0. */
static uint8_t walk_verdict(const fbpe_rx_loop *lp, int k) {
    return (uint32_t)k < lp->num_arms ? arm_taken(lp, (uint32_t)k) : FBPE_RX_V_END;
}

/* What an iteration of loop lp does at ASCII character a followed by ASCII b (b < 0: by a
 * alone, FBPE_RX_V_PAIR where the next character decides), FBPE_RX_V_*: each look-ahead by
 * its pair table; 0 where one has none or it does not decide, or where an arm is a run of
 * bounded length. */
static uint8_t loop_verdict(const fbpe_rx *p, const fbpe_rx_loop *lp, int a, int b) {
    arm_looks at = {a, b, 0, NULL, 0, 0, 0, 0};
    int k = arm_walk(p, lp, &at);
    if (k < 0) return at.pair_asked ? FBPE_RX_V_PAIR : 0;
    return (uint8_t)((at.reads ? FBPE_RX_V_READS : 0) | walk_verdict(lp, k));
}

/* What an iteration of loop lp does at ASCII characters a b c where loop_pairs does not
 * decide it (fbpe_rx.loop_triples): each look-ahead by its pair table where that decides it,
 * else by its body run on the text "abc" alone, which decides it for every text that goes on
 * with a b c where it read neither past c nor whether the text ends after c. FBPE_RX_V_*
 * with READS where what was read ends at c; 0 where it does not decide or what was read ends
 * before c (loop_iteration's SEEN records c). */
static uint8_t loop_triple(const fbpe_rx *p, const fbpe_rx_loop *lp, int a, int b, int c) {
    arm_looks at = {a, b, c, NULL, 0, 0, 0, 1};
    int k = arm_walk(p, lp, &at);
    if (k < 0 || at.reads != 2) return 0;
    return (uint8_t)(FBPE_RX_V_READS | walk_verdict(lp, k));
}

/* The rows of loop_triples for loop table k (the pairs it does not decide), shared where
 * alike, while there is room. What the matcher does at an ASCII character is a function of
 * its atoms (and, for $, of its being a line break), so a row is computed once per class of
 * such characters: per character, SuperBPE's stage two took 193M instructions to prepare
 * (3.9M without the rows), a class at a time 5.0M. */
/* Per ASCII character, the first one the matcher cannot tell from it (the same atoms, and a
 * line break only as a line break): itself where none comes before it. */
static void ascii_firsts(const fbpe_rx *p, uint8_t first[128]) {
    for (int c = 0; c < 128; c++) {
        first[c] = (uint8_t)c;
        for (int d = 0; d < c; d++) {
            if (p->ascii_masks[d] == p->ascii_masks[c] && (d == '\n') == (c == '\n')) {
                first[c] = (uint8_t)d;
                break;
            }
        }
    }
}

static void loop_triples(fbpe_rx *p, const fbpe_rx_loop *lp, uint32_t k) {
    uint8_t first[128]; /* the first character of each one's class */
    ascii_firsts(p, first);
    for (int a = 0; a < 128; a++) {
        if (lp->ascii[a] != FBPE_RX_V_PAIR) continue;
        for (int b = 0; b < 128; b++) {
            uint8_t row[128];
            int any = 0;
            uint32_t r;
            if (p->loop_pairs[k][a][b]) continue;
            if (first[a] != a || first[b] != b) { /* its class's pair came first */
                p->loop_triple_of[k][a][b] = p->loop_triple_of[k][first[a]][first[b]];
                continue;
            }
            for (int c = 0; c < 128; c++)
                any |= row[c] = first[c] == c ? loop_triple(p, lp, a, b, c) : row[first[c]];
            if (!any) continue;
            for (r = 0; r < p->num_triples && memcmp(p->loop_triples[r], row, sizeof row); r++) {
            }
            if (r == p->num_triples) {
                if (r == FBPE_RX_MAX_TRIPLES) continue;
                memcpy(p->loop_triples[p->num_triples++], row, sizeof row);
            }
            p->loop_triple_of[k][a][b] = (uint8_t)(r + 1);
        }
    }
}

/* What an iteration of loop lp does at ASCII character a followed by the character whose
 * UTF-8 is wide[0..len) (beyond ASCII), as loop_verdict: 0 where that does not decide. */
static uint8_t loop_wide_verdict(const fbpe_rx *p, const fbpe_rx_loop *lp, int a, const uint8_t *wide,
                                 size_t len) {
    arm_looks at = {a, -2, 0, wide, len, 0, 0, 0};
    int k = arm_walk(p, lp, &at);
    if (k < 0) return 0;
    return (uint8_t)((at.reads ? FBPE_RX_V_READS : 0) | walk_verdict(lp, k));
}

/* The rows of loop_wide for loop table k. What the matcher does at a character beyond ASCII
 * is a function of its atoms, its class's, so one character of each class stands for it: the
 * first in the Basic Multilingual Plane (a class found only past it is not decided). */
static void loop_wides(fbpe_rx *p, const fbpe_rx_loop *lp, uint32_t k) {
    uint32_t first[256] = {0};
    uint8_t same[128];
    for (uint32_t cp = 0xFFFF; cp >= 0x80; cp--)
        if (cp < 0xD800 || cp > 0xDFFF) first[class_of(p, cp)] = cp;
    ascii_firsts(p, same);
    memset(p->loop_wide_of[k], 0, sizeof p->loop_wide_of[k]);
    for (int a = 0; a < 128; a++) {
        uint8_t row[256];
        uint32_t r;
        if (lp->ascii[a] != FBPE_RX_V_PAIR) continue;
        if (same[a] != a) { /* one the matcher cannot tell from it came first: its row */
            p->loop_wide_of[k][a] = p->loop_wide_of[k][same[a]];
            continue;
        }
        memset(row, 0, sizeof row);
        for (uint32_t c = 0; c < p->num_classes && c < 256; c++) {
            uint8_t wide[4];
            if (first[c]) row[c] = loop_wide_verdict(p, lp, a, wide, fbpe_utf8_put(first[c], wide));
        }
        for (r = 0; r < p->num_wide && memcmp(p->loop_wide[r], row, sizeof row); r++) {
        }
        if (r == p->num_wide) {
            if (r == FBPE_RX_MAX_WIDE) continue;
            memcpy(p->loop_wide[p->num_wide++], row, sizeof row);
        }
        p->loop_wide_of[k][a] = (uint8_t)(r + 1);
    }
}

/* Whether an iteration of lp at ASCII character a goes on, by its verdict v there. */
static int goes_on(uint8_t v) {
    return (v & (FBPE_RX_V_ONE | FBPE_RX_V_RUN | FBPE_RX_V_WORD)) && (v & (FBPE_RX_V_READS - 1)) != FBPE_RX_V_END;
}

static void nibbles_add(fbpe_rx_nibbles t, int c) { t[c & 15] |= (uint8_t)(1u << (c >> 4)); }

#ifdef FBPE_RX_BLOCKS
/* The two-byte characters that loop lp's blocks read as an ASCII character (wide_as_ascii):
 * an ASCII character X whose atoms are those of "\u00e9" and at which an iteration goes on
 * whatever follows, and the characters whose atoms are X's: every one of a lead byte whose
 * 64 characters all are (wide_leads: Cyrillic, Latin Extended-A, where the word arm is
 * \p{L}), and of Latin-1's those that are (latin_cont: not "\u00d7" or "\u00f7"). The
 * matcher tells characters apart by their atoms alone (a line break aside, for $), so an
 * iteration at such a character goes on as one at X does, and one at a character before it
 * decides as it would before X; a position inside the character is inside the run that
 * takes it, as an ASCII one inside a run is. Each stopped a block before, and the iterations
 * then went on one at a time to the end of the piece: SuperBPE's stage two, 300,000 fresh
 * characters of French (encode_text, callgrind), 4.79 M instructions in the engine with the
 * accented letters stopping blocks, 2.53 M without; Russian 35.4 M, 8.8 M with the pair
 * table's verdicts by class (loop_wides) too. */
static void wide_letters(const fbpe_rx *p, const fbpe_rx_loop *lp, fbpe_rx_block *bk) {
    static const uint8_t e_acute[2] = {0xC3, 0xA9};
    size_t len;
    uint64_t m = atoms_at(p, e_acute, 0, &len);
    int x = 0;
    for (int c = 1; c < 128 && !x; c++)
        if (c != '\n' && p->ascii_masks[c] == m && goes_on(lp->ascii[c])) x = c;
    if (!x) return;
    for (int lead = 0xC2; lead < 0xE0; lead++) {
        int all = 1;
        for (int t = 0x80; t < 0xC0; t++) {
            const uint8_t ch[2] = {(uint8_t)lead, (uint8_t)t};
            int same = atoms_at(p, ch, 0, &len) == m;
            all &= same;
            if (same && lead == 0xC3) nibbles_add(bk->latin_cont, t ^ 0x80);
        }
        if (all) nibbles_add(bk->wide_leads, lead ^ 0x80);
    }
    bk->wide_as = (uint8_t)x;
}
#endif

/* The tables of loop lp's blocks (loop_blocks_from); `pairs` its pair table or NULL. Only
 * where an iteration begun inside a run goes on: every arm one character or a run that
 * FBPE_RX_V_RUN marks, without tests (at a member of its range, an arm before it takes the
 * character, or it does); and the characters that ask the pair table have at most
 * FBPE_RX_BLOCK_GROUPS rows of it. And only for a loop with a word arm (a run of a range,
 * its iterations a word and what is between words): where every iteration takes one
 * character (BLOOM's), the tables take it for about 5 instructions, a block about 4 a
 * character and 40 a call, and BLOOM's pieces end at every mark (callgrind_scan.py bloom
 * compiled: 54.72 M instructions without blocks, 57.52 M with them). */
static void loop_blocks(const fbpe_rx *p, fbpe_rx_loop *lp, const uint8_t (*pairs)[128]) {
    fbpe_rx_block *bk = &lp->block;
    lp->blocks = 0;
    memset(bk, 0, sizeof *bk);
    if (!lp->word) return;
#ifdef FBPE_RX_BLOCKS
    int row[FBPE_RX_BLOCK_GROUPS]; /* a character of each group */
    for (uint32_t k = 0; k < lp->num_arms; k++) {
        const fbpe_rx_arm *arm = &lp->arms[k];
        if (arm->take.kind == FBPE_RX_STEP_ONE) continue;
        if (!arm_runs(arm) || arm->num_tests) return;
        for (int c = 0; c < 128; c++)
            if (p->ascii_masks[c] >> arm->take.atom & 1) nibbles_add(bk->runs, c);
    }
    for (int c = 0; c < 128; c++) {
        uint8_t v = lp->ascii[c];
        if (goes_on(v)) {
            nibbles_add(bk->always, c);
            continue;
        }
        if (v != FBPE_RX_V_PAIR) continue; /* the loop ends here, or asks its arms */
        if (!pairs) return;
        uint32_t g = 0;
        while (g < bk->num_groups && memcmp(pairs[row[g]], pairs[c], 128) != 0) g++;
        if (g == bk->num_groups) {
            if (g == FBPE_RX_BLOCK_GROUPS) return;
            row[bk->num_groups++] = c;
            for (int b = 0; b < 128; b++)
                if (goes_on(pairs[c][b])) nibbles_add(bk->pair_then[g], b);
        }
        nibbles_add(bk->pair_first[g], c);
    }
    wide_letters(p, lp, bk);
    lp->blocks = (uint32_t)__builtin_cpu_supports("ssse3");
#else
    (void)p;
    (void)pairs;
#endif
}

/* The verdicts of each loop (fbpe_rx_loop.ascii, fbpe_rx.loop_pairs). */
static void loop_verdicts(fbpe_rx *p) {
    uint32_t tables = 0;
    p->num_triples = p->num_wide = 0;
    memset(p->loop_triple_of, 0, sizeof p->loop_triple_of);
    for (uint32_t k = 0; k < p->num_loops; k++) {
        fbpe_rx_loop *lp = &p->loops[k];
        int asks = 0;
        lp->pairs = 0;
        lp->word = 0;
        for (uint32_t a = lp->num_arms; a-- > 0;)
            if (arm_runs(&lp->arms[a])) lp->word = FBPE_RX_V_ARM + a;
        lp->word_first = lp->word == FBPE_RX_V_ARM && !lp->arms[0].num_tests;
        for (int a = 0; a < 128; a++) {
            lp->ascii[a] = loop_verdict(p, lp, a, -1);
            asks |= lp->ascii[a] == FBPE_RX_V_PAIR;
        }
        if (asks && tables == FBPE_RX_MAX_LOOP_PAIRS) {
            for (int a = 0; a < 128; a++)
                if (lp->ascii[a] == FBPE_RX_V_PAIR) lp->ascii[a] = 0;
            asks = 0;
        }
        if (asks) {
            for (int a = 0; a < 128; a++)
                for (int b = 0; b < 128; b++) p->loop_pairs[tables][a][b] = loop_verdict(p, lp, a, b);
            loop_triples(p, lp, tables);
            loop_wides(p, lp, tables);
            lp->pairs = ++tables;
        }
        loop_blocks(p, lp, lp->pairs ? (const uint8_t(*)[128])p->loop_pairs[lp->pairs - 1] : NULL);
    }
}

/* ascii_fast (fbpe_rx_piece_end): per ASCII character, the alternatives it can begin, in
 * order, up to the first that is not fused, with what piece_end_after would decide from the
 * character alone: whether an optional head is checked against the next character. An
 * alternative the loop would skip at this
 * character (its head needs what the character is not) is left out of the list. */
static void fast_starts(fbpe_rx *p) {
    for (uint32_t c = 0; c < 128; c++) {
        uint64_t alts = p->ascii_alts[c], here = p->ascii_masks[c];
        unsigned j = 0;
        memset(p->ascii_fast[c], 0, sizeof p->ascii_fast[c]);
        for (; alts && j < FBPE_RX_MAX_FAST; alts &= alts - 1) {
            uint32_t k = (uint32_t)__builtin_ctzll(alts);
            if (k >= p->num_alts) break;
            const fbpe_rx_linear *L = &p->linear[k];
            uint64_t opt = p->heads[2 * k], after = p->heads[2 * k + 1];
            uint16_t f = (uint16_t)(k + 1);
            if (opt && !(here & after)) {
                if (!(here & opt)) continue;
                f |= FBPE_RX_FAST_HEAD;
            }
            if (L->loop || L->single || !L->fused) break;
            if (is_trusting(L)) f |= FBPE_RX_FAST_TRUSTING;
            p->ascii_fast[c][j++] = f;
        }
    }
}

/* The quick entry (fbpe_rx_quick) of alternative k at ASCII character c; 0 where the
 * alternative is of no quick kind. */
static int quick_of(const fbpe_rx *p, uint32_t c, uint32_t k, fbpe_rx_quick *q) {
    const fbpe_rx_linear *L = &p->linear[k];
    const fbpe_rx_ins *in = &p->code[p->starts[k]];
    uint64_t here = p->ascii_masks[c], opt = p->heads[2 * k], after = p->heads[2 * k + 1];
    memset(q, 0, sizeof *q);
    if (L->single) {
        q->y = L->steps[0].atom;
        q->kind = FBPE_RX_QUICK_SINGLE;
        return 1;
    }
    if (L->loop) return 0;
    if (L->fused) {
        const fbpe_rx_step *st = L->steps;
        if (L->fused & FBPE_RX_FUSED_OPT) {
            q->skip = here >> st->atom & 1;
            q->gives = st->gives;
            st++;
        }
        /* As fast_starts decides it: the character is X and the next must begin Y. */
        q->head = opt && !(here & after);
        if (q->head && !q->skip) return 0;
        q->after = after;
        q->y = st->atom;
        q->ymin = st->min;
        q->gives |= (uint8_t)(st->gives << 1);
        st++;
        if (L->fused & FBPE_RX_FUSED_TAIL) {
            q->tail = 1;
            q->z = st->atom;
            q->zmin = st->min;
            st++;
        }
        if (L->fused & FBPE_RX_FUSED_GUARD) q->guard = p->guards[st->min];
        /* The character Y starts at: this one, or the next, which the head tests. */
        q->look = q->ymin == 0 && (q->head || !q->skip);
        q->kind = FBPE_RX_QUICK_FUSED;
        if (!q->skip && !q->head && !q->tail && !q->guard && q->ymin <= 1 && (here >> q->y & 1))
            q->kind = FBPE_RX_QUICK_RUN;
        return 1;
    }
    if (opt) return 0;
    if (L->matches && L->num_steps == 1 && L->steps[0].kind == FBPE_RX_STEP_RANGE) {
        q->y = L->steps[0].atom;
        q->ymin = L->steps[0].min;
        q->zmin = L->steps[0].max;
        q->kind = FBPE_RX_QUICK_COUNTED;
        return q->zmin > 0;
    }
    if (L->matches && L->num_steps == 1 && L->steps[0].kind == FBPE_RX_STEP_RUN_NOT) {
        q->y = L->steps[0].atom;
        q->ymin = L->steps[0].min;
        q->z = L->steps[0].look;
        q->kind = FBPE_RX_QUICK_RUN_NOT;
        return 1;
    }
    /* Y{m,} $ MATCH, greedy or possessive, unbounded (a bounded run may stop before a final
     * \n it could take). */
    if ((in[0].op == FBPE_RX_RUN_GREEDY || in[0].op == FBPE_RX_RUN_POSSESSIVE) &&
        in[0].c == FBPE_RX_INF && in[1].op == FBPE_RX_EOL && in[2].op == FBPE_RX_MATCH) {
        q->y = (uint8_t)in[0].a;
        q->ymin = in[0].b;
        q->kind = FBPE_RX_QUICK_RUN_END;
        return 1;
    }
    /* Y{m,} Z MATCH or Y{m,} Z+ MATCH, Y greedy and unbounded, where Z has no ASCII
     * character that Y lacks. */
    if (L->num_steps == 0 && in[0].op == FBPE_RX_RUN_GREEDY && in[0].c == FBPE_RX_INF &&
        (in[1].op == FBPE_RX_ATOM ||
         ((in[1].op == FBPE_RX_RUN_GREEDY || in[1].op == FBPE_RX_RUN_POSSESSIVE) && in[1].b == 1 &&
          in[1].c == FBPE_RX_INF)) &&
        in[2].op == FBPE_RX_MATCH) {
        for (int d = 0; d < 128; d++)
            if ((p->ascii_masks[d] >> in[1].a & 1) && !(p->ascii_masks[d] >> in[0].a & 1)) return 0;
        q->y = (uint8_t)in[0].a;
        q->ymin = in[0].b;
        q->z = (uint8_t)in[1].a;
        q->kind = FBPE_RX_QUICK_GIVE_TO;
        return 1;
    }
    return 0;
}

/* Atom a as a quick entry holds it (fbpe_rx_quick.y, .z). */
static uint8_t quick_atom(const fbpe_rx *p, uint32_t a) {
    if (p->spans[a].kind == FBPE_RX_ASCII_RANGE) return (uint8_t)(a | FBPE_RX_QUICK_RANGE);
    for (unsigned c = 'a'; c <= 'z'; c++) /* every letter, both cases, is a member */
        if (!(p->ascii_masks[c] >> a & 1) || !(p->ascii_masks[c - 0x20] >> a & 1)) return (uint8_t)a;
    return (uint8_t)(a | FBPE_RX_QUICK_LETTERS);
}

/* quick (fbpe_rx_quick_end): per ASCII character, the alternatives it can begin, in order, up
 * to the first of no quick kind; one the matcher would skip at this character (its head
 * needs what the character is not) is left out, as in fast_starts. */
static void quick_starts(fbpe_rx *p) {
    memset(p->quick, 0, sizeof p->quick);
    for (uint32_t c = 0; c < 128; c++) {
        uint64_t alts = p->ascii_alts[c], here = p->ascii_masks[c];
        unsigned j = 0;
        for (; alts && j < FBPE_RX_MAX_QUICK; alts &= alts - 1) {
            uint32_t k = (uint32_t)__builtin_ctzll(alts);
            if (k >= p->num_alts) break;
            uint64_t opt = p->heads[2 * k], after = p->heads[2 * k + 1];
            if (opt && !(here & after) && !(here & opt)) continue;
            fbpe_rx_quick *q = &p->quick[c][j];
            if (!quick_of(p, c, k, q)) {
                memset(q, 0, sizeof *q);
                break;
            }
            q->y = quick_atom(p, q->y);
            q->z = quick_atom(p, q->z);
            j++;
        }
    }
}

void fbpe_rx_prepare(fbpe_rx *p) {
    for (uint32_t a = 0; a < 64; a++) {
        p->spans[a] = span_of(p, a);
        for (unsigned c = 0; c < 256; c++)
            p->ascii_member[a][c] = (uint8_t)(c < 0x80 && (p->ascii_masks[c] >> a & 1));
    }
    p->num_loops = p->num_looks = p->num_subs = 0;
    for (uint32_t k = 0; k < p->num_alts && k < 64; k++) {
        fbpe_rx_linear *L = &p->linear[k];
        walk_steps(p, p->starts[k], FBPE_RX_INF, L);
        L->loop = loop_of(p, p->starts[k], k + 1 < p->num_alts ? p->starts[k + 1] : p->num_code);
    }
    for (uint32_t k = 0; k < p->num_looks && k < FBPE_RX_MAX_PAIRS; k++)
        look_pairs(p, &p->looks[k], k);
    loop_verdicts(p);
    fast_starts(p);
    quick_starts(p);
}
