/* The compiled pattern matcher; see regex_vm.h. */
#include "regex_vm.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

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

/* The atoms of the character at s[i]; its length in *len. */
static inline uint64_t atoms_at(const fbpe_rx *p, const uint8_t *s, size_t i, size_t *len) {
    if (s[i] < 0x80) {
        *len = 1;
        return p->ascii_masks[s[i]];
    }
    uint32_t cp = fbpe_utf8_decode(s, i, len);
    return p->masks[p->blocks[(size_t)p->index[cp >> 8] * 256 + (cp & 0xFF)]];
}

/* The start of the character that ends at e (> 0). */
static inline size_t char_before(const uint8_t *s, size_t e) {
    size_t k = e - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80) k--;
    return k;
}

/* The end of the run of ASCII letters from i, eight bytes at a time (scanners.h's trick:
 * most words are short, and a byte loop pays a mispredicted branch where each ends). */
static inline size_t ascii_letters(const uint8_t *s, size_t i, size_t n) {
    const uint64_t high = 0x8080808080808080ull;
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) return i; /* big-endian: the general loop does it */
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t y = (w | 0x2020202020202020ull) & 0x7F7F7F7F7F7F7F7Full;
        uint64_t letters = (y + 0x1F1F1F1F1F1F1F1Full) & ~(y + 0x0505050505050505ull) & ~w & high;
        uint64_t stop = ~letters & high;
        if (stop) return i + (size_t)__builtin_ctzll(stop) / 8;
        i += 8;
    }
    while (i < n && ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')) i++;
    return i;
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
            if (in->c == FBPE_RX_INF && (p->letter_atoms | p->space_atoms) >> in->a & 1) {
                /* ASCII letters or spaces eight at a time; one byte is one character. */
                e = p->letter_atoms >> in->a & 1 ? ascii_letters(s, pos, n) : ascii_spaces(s, pos, n);
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

/* The straight-line steps L of an alternative from i (fbpe_rx_linear): 1 with their end in
 * *out, 0 where they fail, -1 when the step budget runs out (vm->status). Each step reads
 * and decides as the matcher's instruction would, and the steps are charged to the same
 * budget (once per alternative: the reads of one call are bounded by the steps times the
 * text), so the reach and the giving up are the matcher's. Each kind of step has a case of
 * its own, the common ones first: on English prose this loop finds most pieces, and a
 * generic run (count, bounds, fast path tests) in every step cost a third more
 * instructions per piece (callgrind, gpt4). */
static inline int run_linear(const fbpe_rx *p, fbpe_rx_vm *vm, const fbpe_rx_linear *L,
                             const uint8_t *s, size_t i, size_t n, uint64_t here, size_t here_len,
                             size_t *out, uint32_t *resume, int *trusted) {
    /* reach: what this call read, from i; charged, and merged into vm->reach at the end
     * (charging from an earlier call's reach would charge a far look of one piece again
     * at every later piece: quadratic on a text that is scanned in linear time). */
    size_t pos = i, reach = i, len;
    int ok = 1, took = 0; /* took: a greedy step took a character (it could give it back) */
    const fbpe_rx_step *st = L->steps, *const last = L->steps + L->num_steps;
    /* The first character's atoms are known (`here`, of here_len bytes): a first step that
     * takes at most that character decides from them. */
    if (st->kind == FBPE_RX_STEP_OPT || st->kind == FBPE_RX_STEP_ONE ||
        (st->kind == FBPE_RX_STEP_STAR && !(here >> st->atom & 1))) {
        SEEN(i);
        if (here >> st->atom & 1) {
            pos += here_len;
            took |= st->greedy;
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
                took |= st->greedy;
            }
            break;
        case FBPE_RX_STEP_ONE: /* X */
            SEEN(pos);
            if (!(pos < n && (atoms_at(p, s, pos, &len) >> st->atom & 1))) goto fail;
            pos += len;
            break;
        case FBPE_RX_STEP_STAR: { /* X{min,}: as many as there are, at least min */
            size_t e = pos;
            uint32_t k;
            if (st->ascii == FBPE_RX_ASCII_LETTERS) {
                e = ascii_letters(s, pos, n);
                if (e < n && s[e] < 0x80) {
                    /* Stopped by an ASCII character, which is no letter: the run ends. */
                    SEEN(e);
                    if (e - pos < st->min) goto fail;
                    took |= st->greedy & (e > pos);
                    pos = e;
                    break;
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
                }
                if (k < st->min) k++;
            }
            SEEN(e);
            if (k < st->min) goto fail;
            took |= st->greedy & (e > pos);
            pos = e;
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
            took |= st->greedy & (e > pos);
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

size_t fbpe_rx_piece_end(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i, size_t n) {
    uint64_t alts, here, next = 0;
    size_t len;
    int next_read = 0;
    if (s[i] < 0x80) {
        alts = p->ascii_alts[s[i]];
        here = p->ascii_masks[s[i]];
        len = 1;
    } else {
        uint32_t cp = fbpe_utf8_decode(s, i, &len);
        uint8_t kind = p->blocks[(size_t)p->index[cp >> 8] * 256 + (cp & 0xFF)];
        alts = p->alts[kind];
        here = p->masks[kind];
    }
    /* The alternatives that this character can begin, in order: the first that matches. */
    while (alts) {
        uint32_t k = (uint32_t)__builtin_ctzll(alts);
        alts &= alts - 1;
        const uint64_t opt = p->heads[2 * k], after = p->heads[2 * k + 1];
        if (opt && !(here & after)) {
            /* It begins with an optional character (regex_program._head): this one must be
             * it, and the next must begin what follows. */
            if (!(here & opt)) continue;
            if (i + len >= n) {
                if (vm->reach < n) vm->reach = n; /* it depended on the end */
                continue;
            }
            if (vm->reach < i + len) vm->reach = i + len;
            if (!next_read) {
                size_t l2;
                next = atoms_at(p, s, i + len, &l2);
                next_read = 1;
            }
            if (!(next & after)) continue;
        }
        const fbpe_rx_linear *L = &p->linear[k];
        size_t e, from = i;
        uint32_t pc = p->starts[k];
        int trusted = 0, r;
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
        if (L->num_steps) {
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

/* Does s[0..c), as a text of its own, cut into the pieces ends[j..k] from `from` on? */
static int same_alone(const fbpe_rx *p, const uint8_t *s, size_t c, size_t from, const size_t *ends,
                      size_t j, size_t k, fbpe_status *status) {
    fbpe_rx_vm vm;
    int same = 1;
    fbpe_rx_vm_init(&vm, c);
    for (size_t i = from; same && j <= k; j++) {
        size_t e = fbpe_rx_piece_end(p, &vm, s, i, c);
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
        size_t e = fbpe_rx_piece_end(p, &vm, s, i, n);
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

void fbpe_rx_prepare(fbpe_rx *p) {
    for (uint32_t k = 0; k < p->num_alts && k < 64; k++) {
        fbpe_rx_linear *L = &p->linear[k];
        uint32_t pc = p->starts[k];
        L->num_steps = 0;
        L->trusts = 0;
        for (; L->num_steps < FBPE_RX_MAX_STEPS; pc++) {
            const fbpe_rx_ins *in = &p->code[pc];
            fbpe_rx_step *st = &L->steps[L->num_steps];
            memset(st, 0, sizeof *st);
            int trust = in->op == FBPE_RX_RUN_GREEDY && in[1].op != FBPE_RX_MATCH;
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
                    st->ascii = p->letter_atoms >> in->a & 1   ? FBPE_RX_ASCII_LETTERS
                                : p->space_atoms >> in->a & 1 ? FBPE_RX_ASCII_SPACES
                                                              : FBPE_RX_ASCII_ANY;
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
        L->matches = p->code[pc].op == FBPE_RX_MATCH;
        L->single = L->matches && L->num_steps == 1 && L->steps[0].kind == FBPE_RX_STEP_ONE;
    }
}
