/* The compiled pre-tokenization engine: a backtracking matcher for the programs that
 * functionalbpe/unicode/regex_program.py makes from a pattern.
 *
 * It answers the scanners' question (scan.h) for any pattern of the subset: given UTF-8 text
 * s[0..n) and a position i where a piece starts, where does regex.findall end that piece? It
 * gives regex's answer because it does what regex does: the top-level alternatives in
 * order, each a backtracking search (greedy runs given back one character at a time, lazy
 * runs taken one at a time, possessive runs and atomic groups never given back, look-aheads
 * atomic), the first non-empty match winning (after an empty match findall tries again at the
 * same place, refusing an empty one, which is the next non-empty match in the same order).
 *
 * Why a backtracking matcher and not a DFA: the patterns that need compiling are exactly
 * those whose meaning is the order of backtracking (possessive quantifiers, \s+(?!\S) giving
 * back one space, alternatives that overlap), which a DFA does not express without
 * rewriting each pattern by hand; and the hand-written scanners show where the time goes on
 * real text: in runs of one class. So a run of one atom (X*, X+, X{m,n}) is one instruction
 * that reads the run in a tight loop and keeps one backtrack frame for the whole run, not one
 * per character; and a top-level alternative is tried only when the first character can
 * start it (a 64-bit mask per kind of character), so that most positions try one.
 *
 * What an atom matches is one table lookup: ASCII directly, other code points through a
 * two-level table (256 code points per block, identical blocks shared) to an equivalence
 * class of characters, and from it a 64-bit mask of the atoms it belongs to. The tables are
 * measured from regex itself (regex_program.tables), so that they agree with it on every
 * code point.
 *
 * A hostile pattern cannot hang or exhaust the process: every call gets a step budget
 * (proportional to the text) and a backtrack stack limit, and when either runs out the
 * matcher gives up with FBPE_EPATTERN; the caller then runs regex, with its own time limit.
 * It also gives up where no non-empty match starts at i (regex would drop a character there:
 * an error that the regex path reports with the character and its offset).
 */
#ifndef FBPE_REGEX_VM_H
#define FBPE_REGEX_VM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../common/bounds.h"

/* The opcodes; the same values as regex_program.py. */
enum {
    FBPE_RX_ATOM = 1,
    FBPE_RX_RUN_GREEDY = 2,
    FBPE_RX_RUN_LAZY = 3,
    FBPE_RX_RUN_POSSESSIVE = 4,
    FBPE_RX_SPLIT = 5,
    FBPE_RX_JMP = 6,
    FBPE_RX_MATCH = 7,
    FBPE_RX_BEGIN = 8,
    FBPE_RX_EOL = 9,
    FBPE_RX_END = 10,
    FBPE_RX_LOOK = 11,
    FBPE_RX_LOOK_END = 12,
    FBPE_RX_ATOMIC = 13,
    FBPE_RX_ATOMIC_END = 14,
    FBPE_RX_LOOK_ATOM = 15
};

#define FBPE_RX_INF 0xFFFFFFFFu
#define FBPE_RX_MAX_LOOK_DEPTH 8

typedef struct {
    uint32_t op, a, b, c;
} fbpe_rx_ins;

/* The straight-line start of an alternative (fbpe_rx_prepare): the instructions from its
 * first one that leave no choice behind, run by fbpe_rx_piece_end in one loop of its own
 * rather than by the matcher. A run that is possessive (or greedy right before MATCH, where
 * giving back can only make the match empty) takes what it can and never gives it back; a
 * single atom, a look-ahead of one character, $ and \z consume nothing or one character
 * and keep no frame either. So until the first instruction that can leave a choice, the
 * match is a function of the text alone: where these steps fail the alternative fails,
 * and where they end with MATCH the piece ends. Most pieces of the shipped patterns are
 * found by such steps alone ([^\r\n\p{L}\p{N}]?+\p{L}+, \p{N}{1,3}, \s+).
 *
 * A greedy run that may have to give back is also a step when what follows it is a
 * character or a run of an atom with no ASCII character in common with it
 * ([^\r\n\p{L}\p{N}]?[\p{Lu}..]*[\p{Ll}..]+ of o200k and tekken): the path that takes every such run
 * whole is the first one regex tries, so where it succeeds its match is regex's. Where it
 * fails (an all-capitals word), the alternative is run again by the matcher from its start,
 * which gives back as regex does. Where the ASCII characters are shared (\s*[\r\n]) the
 * path nearly always fails, and the run stays the matcher's. */
enum {
    FBPE_RX_STEP_OPT,   /* X?+ (also X? before MATCH) */
    FBPE_RX_STEP_ONE,   /* X */
    FBPE_RX_STEP_STAR,  /* X{min,}+ */
    FBPE_RX_STEP_RANGE, /* X{min,max}+ */
    FBPE_RX_STEP_LOOK,  /* (?=X) (?!X) */
    FBPE_RX_STEP_EOL,   /* $ */
    FBPE_RX_STEP_END,   /* \z */
    FBPE_RX_STEP_GUARD, /* a guarded choice: where its guard fails the steps go on at its second
                         * arm; where it holds, the matcher goes on from the choice (at) */
    FBPE_RX_STEP_RUN_NOT /* X{min,}(?!Y) before MATCH, no character in both X and Y (\s+(?!\S)):
                          * the whole run, less one character where Y is what stopped it */
};
/* How a run of an atom reads ASCII eight bytes at a time (fbpe_rx_span). RANGE: the atom's
 * ASCII members are exactly one range lo..hi, or A-Z a-z (fold 0x20, lo 'a', hi 'z'), so the
 * run of ASCII it takes is the run of bytes in the range, and an ASCII byte outside it ends
 * the run. SPACES: the space is a member among others: a run of spaces is read first. */
enum { FBPE_RX_ASCII_ANY = 0, FBPE_RX_ASCII_RANGE = 1, FBPE_RX_ASCII_SPACES = 2 };

typedef struct {
    /* RANGE, sixteen bytes at a time (fbpe_rx_ascii_span): fold, 0x80 - lo, and
     * -128 + (hi - lo + 1) in every byte; aligned for SSE2's loads (a program lives in a
     * Python object or on the stack, both aligned to 16 bytes on x86-64) */
    _Alignas(16) uint8_t fold16[16];
    _Alignas(16) uint8_t bias16[16];
    _Alignas(16) uint8_t limit16[16];
    uint64_t fold, add_lo, add_hi; /* RANGE: fold, 0x80 - lo, 0x7F - hi in every byte */
    uint8_t kind;                  /* FBPE_RX_ASCII_* */
    uint8_t fold8;                 /* 0x20 for A-Z a-z, else 0 */
    uint8_t lo, hi;
} fbpe_rx_span;
#define FBPE_RX_MAX_STEPS 6

/* The shapes that make most pieces of the shipped patterns, run by fbpe_rx_piece_end
 * without the general step loop: an optional character, a run, a second run, a guarded
 * choice, then MATCH (` ?\p{L}+`, `[^\r\n\p{L}\p{N}]?+\p{L}+`, `\s+`,
 * ` ?[^\s\p{L}\p{N}]++[\r\n]*`, o200k's `[^\r\n\p{L}\p{N}]?[\p{Lu}..]*[\p{Ll}..]+(?i:'s|..)?`).
 * FUSED_RUN is set for all of them; GIVES where a run is taken on trust (fbpe_rx_step.greedy). */
enum {
    FBPE_RX_FUSED_RUN = 1,
    FBPE_RX_FUSED_OPT = 2,
    FBPE_RX_FUSED_TAIL = 4,
    FBPE_RX_FUSED_GUARD = 8,
    FBPE_RX_FUSED_GIVES = 16
};

typedef struct {
    uint8_t kind;   /* FBPE_RX_STEP_* */
    uint8_t atom;   /* all but EOL, END: the atom */
    uint8_t ascii;  /* STAR: FBPE_RX_ASCII_*: how to read its run of ASCII (p->spans) */
    uint8_t negate; /* LOOK: (?!) rather than (?=) */
    uint8_t greedy; /* a greedy run taken whole on trust: the alternative may need giving back */
    uint8_t futile; /* greedy: giving back an ASCII character it took can never help (no ASCII
                     * member of its atom can begin what must follow: [\p{Lu}..]*[\p{Ll}..]+) */
    uint8_t look;   /* RUN_NOT: the atom Y */
    uint8_t gives;  /* greedy and not futile: taking anything may need giving back */
    uint32_t min, max; /* GUARD: min is the guard's number, max the choice's instruction */
} fbpe_rx_step;

typedef struct {
    uint32_t num_steps;
    uint32_t next;    /* the instruction after the steps */
    uint32_t matches; /* it is MATCH: the steps are the whole alternative */
    uint32_t trusts;  /* some step is `greedy` */
    uint32_t single;  /* the alternative is one character of one atom (one ONE step, MATCH) */
    uint32_t fused;   /* FBPE_RX_FUSED_*: the alternative is [X?] Y{m,} [Z{k,}] [guard] and nothing else */
    uint32_t loop;    /* 1 + its index in p->loops where the alternative is such a loop, else 0 */
    fbpe_rx_step steps[FBPE_RX_MAX_STEPS];
} fbpe_rx_linear;
/* One alternative of a look-ahead's body (a top-level choice of it: `\p{N}{1,3}`,
 * ` ?[^\s\p{L}\p{N}]{2,}[\r\n/]*` and ` +(?!\S)` of SuperBPE's cuts) with its straight-line
 * start, as a top-level alternative has one. A look-ahead asks only whether its body matches
 * at all, so it matches where one of its alternatives does, each tried on its own. */
typedef struct {
    uint32_t start;      /* its first instruction */
    uint64_t guard;      /* atoms one of which it needs first (its SPLIT's guard), or 0 */
    uint64_t opt, after; /* it begins X? Y (a required Y): the atoms of X and of Y, else 0, 0 */
    fbpe_rx_linear L;    /* its steps, which end at the look-ahead's end (matches) */
} fbpe_rx_sub;
/* A look-ahead (LOOK at pc) whose body is run as its alternatives p->subs[first..first+count). */
typedef struct {
    uint32_t pc, first, count;
    uint32_t pairs; /* 1 + its index in p->pairs where it has that table, else 0 */
} fbpe_rx_look;
/* One arm of a loop (fbpe_rx_loop): look-aheads, then one atom or one run of an atom. */
#define FBPE_RX_MAX_TESTS 2
typedef struct {
    uint32_t num_tests;
    uint8_t test_negate[FBPE_RX_MAX_TESTS];
    uint8_t test_atom[FBPE_RX_MAX_TESTS]; /* a look-ahead of one character: its atom */
    uint8_t test_look[FBPE_RX_MAX_TESTS]; /* else 1 + its index in p->looks */
    fbpe_rx_step take;                    /* ONE, STAR or RANGE (min >= 1), never given back */
} fbpe_rx_arm;
/* An alternative that is one loop of arms and nothing else: [(?>] B{1,}|B{0,} [)] MATCH, B
 * being arms A1|A2|..., each of look-aheads and one atom or run (SuperBPE's stage two,
 * `(?:\p{L}++|[^\S ]++|(?!cuts)[\s\S])++`; BLOOM's `(?:(?! ?[^..])[\s\S])+`). Such a loop
 * ends a piece the first time no arm matches: where the next iteration fails, the latest
 * frame is that iteration's way out of the loop, which reaches MATCH, so no earlier choice
 * (another arm, a run given back) is ever tried. The pieces are then found arm by arm, with
 * no frames and no dispatch (run_loop). */
#define FBPE_RX_MAX_ARMS 6
/* What an iteration of a loop does at an ASCII character (fbpe_rx_loop.ascii and
 * fbpe_rx.loop_pairs, fbpe_rx_prepare): take arm FBPE_RX_V_ARM + a, end the loop, or ask
 * the pair table (the next character decides); 0: run the arms one by one. READS: the
 * arms read the next character to decide. ONE: the arm takes that character alone. RUN:
 * the arm is a run X{min,}, min <= 1, of an atom whose ASCII members are one range
 * (fbpe_rx_span), which an ASCII character outside the range ends; WORD: that arm is the
 * loop's `word`. */
enum {
    FBPE_RX_V_ARM = 1,
    FBPE_RX_V_END = 7,
    FBPE_RX_V_PAIR = 8,
    FBPE_RX_V_READS = 16,
    FBPE_RX_V_ONE = 32,
    FBPE_RX_V_RUN = 64,
    FBPE_RX_V_WORD = 128
};
/* Sets of ASCII characters for a 16-byte test (pshufb): member c = hi << 4 | lo is bit hi of
 * entry lo. */
typedef uint8_t fbpe_rx_nibbles[16];
#define FBPE_RX_BLOCK_GROUPS 3
typedef struct {
    fbpe_rx_nibbles always; /* an iteration here goes on, whatever follows */
    /* an iteration at a member of pair_first[g] goes on where the next character is in
     * pair_then[g] (characters whose rows of the pair table are alike) */
    fbpe_rx_nibbles pair_first[FBPE_RX_BLOCK_GROUPS], pair_then[FBPE_RX_BLOCK_GROUPS];
    fbpe_rx_nibbles runs; /* members of a run arm's range */
    uint32_t num_groups;
    /* Two-byte characters read as the ASCII character wide_as (0: none), whose atoms they
     * share, and at which an iteration goes on whatever follows (blocks_of): every character
     * of a lead byte L where L ^ 0x80 is in wide_leads (Cyrillic's 0xD0 and 0xD1), and of the
     * Latin-1 lead 0xC3 those whose continuation byte t has t ^ 0x80 in latin_cont */
    fbpe_rx_nibbles wide_leads, latin_cont;
    uint8_t wide_as;
} fbpe_rx_block;
typedef struct {
    uint32_t num_arms;
    uint32_t pairs; /* 1 + its index in p->loop_pairs where it has that table, else 0 */
    /* 1 where run_loop passes over 16 bytes at a time where every iteration goes on (the
     * tables in `block`, SSSE3 found at run time); 0 where its arms do not allow it */
    uint32_t blocks;
    fbpe_rx_block block;
    uint32_t word;  /* FBPE_RX_V_ARM + k of the first arm k marked FBPE_RX_V_RUN (\p{L}++), whose
                     * range run_loop reads sixteen bytes at a time (FBPE_RX_V_WORD); 0 where
                     * there is none */
    uint32_t word_first; /* 1 where the word arm is the first and has no look-ahead */
    fbpe_rx_arm arms[FBPE_RX_MAX_ARMS];
    uint8_t ascii[128]; /* per ASCII character: FBPE_RX_V_* whatever follows it */
} fbpe_rx_loop;
#define FBPE_RX_MAX_LOOPS 4
#define FBPE_RX_MAX_LOOKS 8
#define FBPE_RX_MAX_SUBS 16
#define FBPE_RX_MAX_PAIRS 2
#define FBPE_RX_MAX_LOOP_PAIRS 1
#define FBPE_RX_MAX_TRIPLES 32
#define FBPE_RX_MAX_WIDE 8
#define FBPE_RX_MAX_FAST 3

/* What fbpe_rx_piece_end decides at an ASCII character before anything else
 * (fbpe_rx_prepare, fbpe_rx_quick_end): the alternatives that character can begin, in order,
 * up to the first of another kind, each of a kind whose fate is a function of the bytes its
 * runs read when they all stop at an ASCII character. */
enum {
    FBPE_RX_QUICK_FUSED = 1,   /* [X?] Y{m,} [Z{k,}] [guarded choice] (fbpe_rx_linear.fused) */
    FBPE_RX_QUICK_COUNTED = 2, /* Y{m,k}, greedy or possessive (\p{N}{1,3}) */
    FBPE_RX_QUICK_GIVE_TO = 3, /* Y{m,} Z or Y{m,} Z+, Y greedy, Z's ASCII characters Y's (\s*[\r\n]+) */
    FBPE_RX_QUICK_RUN_NOT = 4, /* Y{m,}(?!Z) (\s+(?!\S): FBPE_RX_STEP_RUN_NOT) */
    FBPE_RX_QUICK_SINGLE = 5,  /* one character of Y (the Functionalizer's ` `, a final \s) */
    FBPE_RX_QUICK_RUN_END = 6, /* Y{m,}$, greedy or possessive (tiktoken's \s++$) */
    FBPE_RX_QUICK_RUN = 7      /* a FUSED Y{0,} or Y{1,} and nothing else, at a character of Y
                                * (the Functionalizer's words, spaces and punctuation) */
};
#define FBPE_RX_MAX_QUICK 6
typedef struct {
    uint8_t kind;    /* FBPE_RX_QUICK_*; 0 ends the list */
    uint8_t skip;    /* FUSED: the character is the optional head X: the runs start after it */
    uint8_t head;    /* FUSED: skip, and the next character must have one of the atoms `after` */
    uint8_t tail;    /* FUSED: a second run */
    uint8_t gives;   /* FUSED: 1 where taking X, 2 where Y taking anything, may need giving back
                      * (fbpe_rx_step.gives): where neither, a run short of its minimum fails
                      * the alternative outright */
    uint8_t look;    /* FUSED: Y may take nothing, and its first character is known to be
                      * ASCII: test it before reading a run (fbpe_rx_quick_end) */
    uint8_t y, z;    /* the runs' atoms (FBPE_RX_QUICK_ATOM), with FBPE_RX_QUICK_RANGE where the
                      * atom's span is a range, FBPE_RX_QUICK_LETTERS where its ASCII members
                      * are every letter and others (fbpe_rx_ascii_letters_first); GIVE_TO:
                      * Z's; RUN_NOT: the look-ahead's */
    uint32_t ymin, zmin; /* COUNTED: zmin is Y's maximum */
    uint64_t after; /* head: what the first run can begin with */
    uint64_t guard; /* a guarded choice at the end: atoms with which it would be taken, else 0 */
} fbpe_rx_quick;
/* fbpe_rx_quick.y and .z: the atom in the low bits, and how its run reads ASCII; the
 * entry, already in a register, says it, where looking the span up cost a multiply and a load
 * per run (scan+count of 1 MB of English: o200k 62.81M -> 61.11M instructions, gpt4 56.6M ->
 * 54.9M). */
enum { FBPE_RX_QUICK_ATOM = 0x3F, FBPE_RX_QUICK_LETTERS = 0x40, FBPE_RX_QUICK_RANGE = 0x80 };

/* A program and its tables. The arrays belong to the Python object that made it
 * (_scanner.pyx keeps every program for the life of the process). */
typedef struct {
    const fbpe_rx_ins *code;
    uint32_t num_code;
    uint32_t num_alts;
    const uint32_t *starts;           /* num_alts: the first instruction of each alternative */
    const uint64_t *ascii_masks;      /* 128: the atoms each ASCII character belongs to */
    const uint64_t *ascii_alts;       /* 128: the alternatives it can begin */
    const uint16_t *index;            /* 0x1100: the block of each 256 code points */
    const uint8_t *blocks;            /* num_blocks * 256: the class of each code point */
    const uint64_t *masks;            /* per class: its atoms */
    const uint64_t *alts;             /* per class: the alternatives it can begin */
    const uint64_t *guards;           /* SPLIT c - 1: atoms one of which its first arm needs next */
    const uint64_t *heads;            /* 2 per alternative: optional first atom, what follows it */
    uint32_t num_blocks, num_classes; /* for checking the program (fbpe_rx_check) */
    uint32_t num_guards;
    uint64_t letter_atoms; /* atoms whose ASCII members are exactly A-Z a-z */
    uint64_t space_atoms;  /* atoms with the ASCII space among their members */
    fbpe_rx_span spans[64];    /* per atom: how its runs read ASCII (fbpe_rx_prepare) */
    /* Per atom and byte: 1 where the byte is an ASCII member of the atom, else 0 (a byte from
     * 0x80 too), so that a run of members is read with one load and one test a byte
     * (fbpe_rx_ascii_bytes; fbpe_rx_prepare fills it from ascii_masks). */
    uint8_t ascii_member[64][256];
    fbpe_rx_linear linear[64]; /* per alternative: its straight-line start (fbpe_rx_prepare) */
    uint32_t num_loops, num_looks, num_subs;      /* fbpe_rx_prepare: */
    fbpe_rx_loop loops[FBPE_RX_MAX_LOOPS];        /* alternatives that are loops of arms */
    fbpe_rx_look looks[FBPE_RX_MAX_LOOKS];        /* the look-aheads those arms test */
    fbpe_rx_sub subs[FBPE_RX_MAX_SUBS];           /* the alternatives of their bodies */
    /* Per look-ahead (the first FBPE_RX_MAX_PAIRS of them) and pair of ASCII characters a, b:
     * 2 where its body matches wherever the text goes on with a b, 1 where it fails there,
     * 0 where that depends on what follows (fbpe_rx_prepare measures it). */
    uint8_t pairs[FBPE_RX_MAX_PAIRS][128][128];
    /* Per loop (the first FBPE_RX_MAX_LOOP_PAIRS of those with an ASCII character that asks)
     * and pair of ASCII characters a, b: FBPE_RX_V_* of an iteration at a followed by b. */
    uint8_t loop_pairs[FBPE_RX_MAX_LOOP_PAIRS][128][128];
    /* Where loop_pairs does not decide (0) at a b: 1 + the row of loop_triples that decides it
     * by the third character, else 0. A row is FBPE_RX_V_* of an iteration at a b c where
     * what it read ends at c (READS), else 0; pairs that decide alike share a row (SuperBPE's
     * stage two: a space before punctuation, two digits, two punctuation marks). */
    uint8_t loop_triple_of[FBPE_RX_MAX_LOOP_PAIRS][128][128];
    uint32_t num_triples;
    uint8_t loop_triples[FBPE_RX_MAX_TRIPLES][128];
    /* Where loop_pairs asks at ASCII character a (FBPE_RX_V_PAIR) and the next character is
     * beyond ASCII: 1 + the row of loop_wide that decides it by that character's class, else
     * 0. A row is FBPE_RX_V_* per class, 0 where the class does not decide (rows alike are
     * shared: SuperBPE's stage two asks at a space before every Cyrillic word). */
    uint8_t loop_wide_of[FBPE_RX_MAX_LOOP_PAIRS][128];
    uint32_t num_wide;
    uint8_t loop_wide[FBPE_RX_MAX_WIDE][256];
    /* Per ASCII character, the fused alternatives it begins before any other kind, in order
     * (fbpe_rx_prepare): FBPE_RX_FAST_* and 1 + each one's number, 0 after the last. */
    uint16_t ascii_fast[128][FBPE_RX_MAX_FAST];
    /* Per ASCII character, what fbpe_rx_quick_end tries (fbpe_rx_quick). */
    fbpe_rx_quick quick[128][FBPE_RX_MAX_QUICK];
} fbpe_rx;
/* ascii_fast: the alternative's number (plus one) in the low bits; HEAD: its optional head
 * must be checked against the next character; TRUSTING: it is FUSED_GIVES or FUSED_GUARD. */
enum { FBPE_RX_FAST_ALT = 0x7F, FBPE_RX_FAST_HEAD = 0x100, FBPE_RX_FAST_TRUSTING = 0x200 };

/* One backtrack frame: where to resume and how. */
typedef struct {
    uint32_t pc, kind;
    size_t pos, aux;
} fbpe_rx_frame;

#define FBPE_RX_INLINE_FRAMES 64

/* A matcher's working state for one text: its budget, its stack, and why it gave up. */
typedef struct {
    uint64_t steps_left;
    size_t reach; /* the furthest byte offset read or compared with the end so far (safe cuts) */
    size_t max_frames;
    fbpe_rx_frame *frames; /* `inline_frames` until the stack outgrows it */
    size_t top, cap;
    fbpe_status status; /* FBPE_OK, or why the last call gave up */
    fbpe_rx_frame inline_frames[FBPE_RX_INLINE_FRAMES];
} fbpe_rx_vm;

/* The budget of a text of n bytes: steps (instructions and characters read) and frames. A
 * pattern of the kind real tokenizers use takes a few steps per byte. The budget is meant to
 * stop only what regex would not finish within its own time limit for an untrusted pattern
 * (1 s plus 10 us per character, pattern_limits.py): a step here costs 1 to 5 nanoseconds
 * (measured: 4.7 ns on a pattern that backtracks through look-aheads), so 2**25 steps plus
 * 4096 per byte is about that much time. A pattern that is quadratic on some input (a+ at
 * every a of a run, then failing) is slow in regex too, and runs here while regex would
 * have finished it. */
#define FBPE_RX_BASE_STEPS ((uint64_t)1 << 25)
#define FBPE_RX_STEPS_PER_BYTE 4096u
/* Frames: a pattern of the subset keeps at most a few per character of its longest piece
 * (SUPERWORDS, whose pieces can be whole paragraphs, about one per character); past this
 * the matcher gives up (24 bytes a frame: at most 96 bytes per byte of text, and never more
 * than 2**24 frames). */
#define FBPE_RX_BASE_FRAMES ((size_t)1 << 16)
#define FBPE_RX_FRAMES_PER_BYTE 4u
#define FBPE_RX_MAX_FRAMES ((size_t)1 << 24)

void fbpe_rx_vm_init(fbpe_rx_vm *vm, size_t n);
void fbpe_rx_vm_free(fbpe_rx_vm *vm);

/* A span's range (fbpe_rx_span.fold16..) in SSE2 registers: loaded once where a loop reads
 * many runs of it (run_loop's word arm). */
typedef struct {
#if defined(__SSE2__)
    __m128i fold, bias, limit;
#else
    int unused;
#endif
} fbpe_rx_range16;

/* Range lo..hi's constants for fbpe_rx_range16_end, one byte of each (span_of fills a span's
 * arrays with them; fbpe_rx_ascii_letters_first sets the letters' in registers). */
static inline uint8_t fbpe_rx_bias16(uint8_t lo) { return (uint8_t)(0x80 - lo); }
static inline uint8_t fbpe_rx_limit16(uint8_t lo, uint8_t hi) { return (uint8_t)(0x80 + (hi - lo + 1)); }

static inline fbpe_rx_range16 fbpe_rx_range16_of(const fbpe_rx_span *sp) {
    fbpe_rx_range16 r;
#if defined(__SSE2__)
    r.fold = _mm_load_si128((const __m128i *)(const void *)sp->fold16);
    r.bias = _mm_load_si128((const __m128i *)(const void *)sp->bias16);
    r.limit = _mm_load_si128((const __m128i *)(const void *)sp->limit16);
#else
    (void)sp;
    r.unused = 0;
#endif
    return r;
}

/* The run of the range from i read sixteen bytes at a time: its end, with *found, or where
 * fewer than sixteen bytes are left (without SSE2: i). A byte b is in lo..hi when
 * (b | fold) + (0x80 - lo), as a signed byte, is below -128 + (hi - lo + 1); no byte >= 0x80
 * is (the sum is then at least -lo, and hi < 0x80). Fewer instructions per word than eight
 * bytes at a time (scan+count of 1 MB of English: o200k 63.98M -> 63.37M, gpt4 57.20M ->
 * 56.90M), and a word of 9 to 16 letters in one read. */
static inline size_t fbpe_rx_range16_end(fbpe_rx_range16 r, const uint8_t *s, size_t i, size_t n,
                                         int *found) {
#if defined(__SSE2__)
    while (n - i >= 16) { /* i <= n */
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        const __m128i in = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(x, r.fold), r.bias), r.limit);
        const unsigned stop = ~(unsigned)_mm_movemask_epi8(in) & 0xFFFFu;
        if (stop) {
            *found = 1;
            return i + (size_t)__builtin_ctz(stop);
        }
        i += 16;
    }
#else
    (void)r;
    (void)s;
    (void)n;
#endif
    *found = 0;
    return i;
}

/* The end of the run of ASCII bytes from i in the range of `sp` (fbpe_rx_span): sixteen bytes
 * at a time, then eight (scanners.h's trick: most words are short, and a byte loop pays a
 * mispredicted branch where each ends). A byte b (< 0x80) is in lo..hi when b + (0x80 - lo)
 * has its high bit and b + (0x80 - hi - 1) has not; neither sum carries into the next byte.
 * Not inline: it reads a text's last fifteen bytes at most, and inlined into every run it
 * tipped GCC into calling the runs themselves (scan+count of 1 MB of English, in one build:
 * o200k 65.6M instructions against 62.7M, gpt4 56.8M against 55.9M). */
static __attribute__((noinline, unused)) size_t fbpe_rx_ascii_span8(const fbpe_rx_span *sp, const uint8_t *s, size_t i, size_t n) {
    const uint64_t high = 0x8080808080808080ull;
    const uint16_t one = 1;
    if (*(const uint8_t *)&one == 1) { /* big-endian: the byte loop below does it all */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t y = (w | sp->fold) & 0x7F7F7F7F7F7F7F7Full;
            uint64_t in = (y + sp->add_lo) & ~(y + sp->add_hi) & ~w & high;
            uint64_t stop = ~in & high;
            if (stop) return i + (size_t)__builtin_ctzll(stop) / 8;
            i += 8;
        }
    }
    while (i < n && s[i] < 0x80 && (uint8_t)((s[i] | sp->fold8) - sp->lo) <= (uint8_t)(sp->hi - sp->lo)) i++;
    return i;
}

/* Always inline, and its fallback never (above). */
static inline __attribute__((always_inline)) size_t fbpe_rx_ascii_span(const fbpe_rx_span *sp, const uint8_t *s, size_t i, size_t n) {
    int found;
    i = fbpe_rx_range16_end(fbpe_rx_range16_of(sp), s, i, n, &found);
    return found ? i : fbpe_rx_ascii_span8(sp, s, i, n);
}

/* The end of the run of atom a's ASCII characters from i, byte by byte (where the atom's
 * ASCII members are no range: punctuation; the last bytes of a text in the Functionalizer's
 * words, [\p{L}\p{N}_], which fbpe_rx_ascii_letters_first reads otherwise). A
 * table of bytes: with a test of the byte and of the atom's bit in its mask, this loop was
 * 8.9M instructions of functionalizer-runs' scan+count of 1 MB of English (62.1M -> 58.5M). */
static inline size_t fbpe_rx_ascii_bytes(const fbpe_rx *p, uint32_t a, const uint8_t *s, size_t i, size_t n) {
    const uint8_t *member = p->ascii_member[a];
    while (i < n && member[s[i]]) i++;
    return i;
}

/* fbpe_rx_ascii_bytes for an atom whose ASCII members are all 52 letters and others besides
 * (the Functionalizer's words, [\p{L}\p{N}_]): the letters sixteen bytes at a time, then
 * the byte that stopped them tested alone, as the hand-written scanner reads its words. The
 * byte loop's exit at the end of each word was the scan's costliest branch: callgrind's
 * branch simulation put 190,596 of the 373,611 mispredicted branches of the Functionalizer's
 * scan+count of 1 MB of English there (the hand-written scanner: 253,901 in all); now 200,091
 * in all, and the scan+count as fast as the hand-written one within 1-7% (it was 19-26%
 * slower; docs/pretokenization.md). */
static inline size_t fbpe_rx_ascii_letters_first(const fbpe_rx *p, uint32_t a, const uint8_t *s,
                                                 size_t i, size_t n) {
#if defined(__SSE2__)
    fbpe_rx_range16 letters;
    letters.fold = _mm_set1_epi8(0x20); /* A-Z a-z as one range, as span_of makes it */
    letters.bias = _mm_set1_epi8((char)fbpe_rx_bias16('a'));
    letters.limit = _mm_set1_epi8((char)fbpe_rx_limit16('a', 'z'));
    for (;;) {
        int found;
        i = fbpe_rx_range16_end(letters, s, i, n, &found);
        if (!found) break; /* fewer than sixteen bytes left */
        if (!p->ascii_member[a][s[i]]) return i;
        i++;
    }
#endif
    return fbpe_rx_ascii_bytes(p, a, s, i, n);
}

static inline size_t fbpe_rx_ascii_run(const fbpe_rx *p, uint32_t a, const uint8_t *s, size_t i, size_t n) {
    if (p->spans[a].kind == FBPE_RX_ASCII_RANGE) return fbpe_rx_ascii_span(&p->spans[a], s, i, n);
    return fbpe_rx_ascii_bytes(p, a, s, i, n);
}

/* fbpe_rx_ascii_run of a quick entry's atom (fbpe_rx_quick.y, .z). Always inline: GCC made it
 * a call, which cost functionalizer-runs' scan+count of 1 MB of English 3M instructions of 89M. */
static inline __attribute__((always_inline)) size_t fbpe_rx_quick_run(const fbpe_rx *p, uint8_t a, const uint8_t *s, size_t i, size_t n) {
    if (a & FBPE_RX_QUICK_RANGE) return fbpe_rx_ascii_span(&p->spans[a & FBPE_RX_QUICK_ATOM], s, i, n);
    if (a & FBPE_RX_QUICK_LETTERS) return fbpe_rx_ascii_letters_first(p, a & FBPE_RX_QUICK_ATOM, s, i, n);
    return fbpe_rx_ascii_bytes(p, a & FBPE_RX_QUICK_ATOM, s, i, n);
}

/* fbpe_rx_piece_end's answer at an ASCII character i from its quick entries, or 0 where they
 * do not decide it; *seen: the furthest byte read, as the matcher would have read it (its
 * reach). Each entry is an alternative in the order the matcher tries them. Where every run
 * it reads stops at an ASCII character (or at a count), the alternative's fate is a function
 * of those bytes alone, as the matcher finds it: a fused one matches where its runs reach
 * their minimums (the path that takes every run whole is the first regex tries; a guarded
 * choice is not taken where its guard fails) and fails outright where a head cannot be
 * followed or a run falls short after runs that took nothing they may give back (o200k's
 * `[\p{Lu}..]*` before `[\p{Ll}..]+` took ASCII capitals: futile, fbpe_rx_step); a counted run
 * takes up to its maximum; `\s*[\r\n]+` gives back to its last line break; one character
 * of an atom is the character's; `\s+(?!\S)` one
 * character where the run stopped at \S; `Y{m,}$` fails where its run stops at an ASCII
 * character that is not the last. A failed alternative passes to the next entry.
 * Anything else -- a run that meets a non-ASCII character or the end of the text, a guard
 * that holds, a fused alternative that may give back -- is left to the matcher (0), which
 * starts again at i. Nothing is charged to the step budget: what the entries read is linear
 * in the piece, and the budget bounds the matcher's backtracking.
 *
 * Always inline, as fbpe_rx_piece_end is: with its runs inline GCC made each in turn a call in
 * the encoder's loop of a compiled pattern (encode_program), 0.2M instructions each in
 * SuperBPE's encoding of 300,000 fresh characters (benchmarks/callgrind_superwords.py). */
static inline __attribute__((always_inline)) size_t fbpe_rx_quick_end(const fbpe_rx *p, const uint8_t *s, size_t i, size_t n,
                                       size_t *seen) {
    const fbpe_rx_quick *q = p->quick[s[i]];
    size_t read = i; /* what the alternatives that failed read */
    for (unsigned j = 0; j < FBPE_RX_MAX_QUICK && q[j].kind; j++) {
        size_t pos = i + q[j].skip, e, f;
        /* Fused first: a word of prose is one, and it is then the kind's only test (the
         * scan's share of o200k's scan+count of 1 MB of English: 29.5M -> 28.3M). */
        if (q[j].kind == FBPE_RX_QUICK_FUSED) {
            if (q[j].head) {
                if (pos >= n || s[pos] >= 0x80) return 0;
                if (!(p->ascii_masks[s[pos]] & q[j].after)) {
                    if (read < pos) read = pos;
                    continue;
                }
            }
            /* o200k's capitals before a word's lower-case letters are mostly none: one test
             * instead of a run read eight bytes at a time (69.95M -> 67.53M instructions). */
            if (q[j].look && !(p->ascii_masks[s[pos]] >> (q[j].y & FBPE_RX_QUICK_ATOM) & 1)) {
                e = pos;
            } else {
                e = fbpe_rx_quick_run(p, q[j].y, s, pos, n);
                if (e >= n || s[e] >= 0x80) return 0;
            }
            /* Where a run falls short: was anything taken that may need giving back? */
#define FBPE_RX_TOOK(q, y_took) (((q).gives & (q).skip) | (((q).gives & 2) && (y_took)))
            if (e - pos < q[j].ymin) {
                if (FBPE_RX_TOOK(q[j], e > pos)) return 0;
                if (read < e) read = e;
                continue;
            }
            if (q[j].tail) {
                f = fbpe_rx_quick_run(p, q[j].z, s, e, n);
                if (f >= n || s[f] >= 0x80) return 0;
                if (f - e < q[j].zmin) {
                    if (FBPE_RX_TOOK(q[j], e > pos)) return 0;
                    if (read < f) read = f;
                    continue;
                }
                e = f;
            }
            if (p->ascii_masks[s[e]] & q[j].guard) return 0;
            if (e > i) {
                *seen = read > e ? read : e; /* the character that ended the last run */
                return e;
            }
            if (read < e) read = e; /* nothing taken: no match here */
            continue;
        }
        /* The character is Y's: the run goes on from the next, and it matches wherever it
         * stops at an ASCII character -- none of FUSED's tests of heads, minimums, tails
         * and guards (scan+count of 1 MB of English: functionalizer-runs 91.2M -> 84.8M). Tested
         * after FUSED, which then pays nothing for it. */
        if (q[j].kind == FBPE_RX_QUICK_RUN) {
            /* One character is the run most often (a space between words): the next is
             * tested first, not read as a run sixteen bytes at a time (functionalizer-runs'
             * scan+count of 1 MB of English: 58.5M -> 56.7M instructions). */
            e = i + 1;
            if (e < n && p->ascii_member[q[j].y & FBPE_RX_QUICK_ATOM][s[e]]) e = fbpe_rx_quick_run(p, q[j].y, s, e, n);
            if (e >= n || s[e] >= 0x80) return 0;
            *seen = read > e ? read : e;
            return e;
        }
        if (q[j].kind == FBPE_RX_QUICK_SINGLE) { /* listed only where the character begins it */
            *seen = read;
            return i + 1;
        }
        e = fbpe_rx_quick_run(p, q[j].y, s, pos, n);
        if (q[j].kind == FBPE_RX_QUICK_COUNTED) {
            uint32_t max = q[j].zmin;
            if (e - pos >= max) {
                e = pos + max; /* it did not look past its last character */
                if (read < e - 1) read = e - 1;
                *seen = read;
                return e;
            }
            if (e >= n || s[e] >= 0x80) return 0;
            if (read < e) read = e;
            if (e - pos >= q[j].ymin && e > i) {
                *seen = read;
                return e;
            }
            continue;
        }
        if (e >= n || s[e] >= 0x80) return 0;
        if (q[j].kind == FBPE_RX_QUICK_RUN_END) {
            /* $ holds at the end and before a final \n; a run stopped at another ASCII
             * character fails, and no character given back can be the end. */
            if (e + 1 == n) return 0;
            if (read < e + 1) read = e + 1; /* $ read whether e + 1 is the end */
            continue;
        }
        size_t end = 0;
        if (read < e) read = e;
        if (e - pos >= q[j].ymin) {
            if (q[j].kind == FBPE_RX_QUICK_GIVE_TO) {
                /* Given back one character at a time down to the minimum, to the first
                 * place where Z matches (not where the run stopped: that character is
                 * not Y's, so not Z's); a run Z+ ends there too, its other characters
                 * being Y's and not Z's. */
                for (f = e; f > pos + q[j].ymin && !end; f--)
                    if (p->ascii_masks[s[f - 1]] >> (q[j].z & FBPE_RX_QUICK_ATOM) & 1) end = f;
            } else if (!(p->ascii_masks[s[e]] >> (q[j].z & FBPE_RX_QUICK_ATOM) & 1))
                end = e;
            else if (e - pos > q[j].ymin)
                end = e - 1; /* one character given back: (?!Z) holds before Z's stop */
        }
        if (end > i) {
            *seen = read;
            return end;
        }
    }
#undef FBPE_RX_TOOK
    return 0;
}

/* fbpe_rx_piece_end where the quick entries do not decide: the fused alternatives, then the
 * general loop and the matcher. */
size_t fbpe_rx_piece_end_general(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i, size_t n);

/* The end of the piece that starts at byte i < n of s[0..n) (valid UTF-8, lone surrogates
 * allowed), > i; or i when the matcher gives up (vm->status says why: FBPE_EPATTERN, or
 * FBPE_ENOMEM). vm->reach becomes at least what this piece's search read. Inline, so that a
 * word of prose costs no call. */
static inline size_t fbpe_rx_piece_end_reach(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s,
                                             size_t i, size_t n) {
    if (s[i] < 0x80) {
        size_t seen, e = fbpe_rx_quick_end(p, s, i, n, &seen);
        if (e) {
            if (seen > vm->reach) vm->reach = seen;
            return e;
        }
    }
    return fbpe_rx_piece_end_general(p, vm, s, i, n);
}

/* fbpe_rx_piece_end_reach for a caller that only scans (counting, encoding, pretokenize): the
 * reach, which only cutting reads (fbpe_rx_safe_cut), is not kept, and with it inlined the
 * quick entries' bookkeeping of what they read goes too (gpt4 scan+count of 1 MB of English:
 * 58.87M -> 57.05M instructions). */
static inline __attribute__((always_inline)) size_t fbpe_rx_piece_end(const fbpe_rx *p, fbpe_rx_vm *vm, const uint8_t *s, size_t i,
                                       size_t n) {
    if (s[i] < 0x80) {
        size_t seen, e = fbpe_rx_quick_end(p, s, i, n, &seen);
        if (e) return e;
    }
    return fbpe_rx_piece_end_general(p, vm, s, i, n);
}

/* A piece end c <= hi of s[0..n), the last one or near it (0 if none), where any text that
 * starts with s[0..n) can be cut: its pieces are those of s[0..c) alone followed by those of
 * the text from c (the proof is in regex_vm.c). The caller makes sure that s starts where a
 * piece starts and that the program does not test for the start of the text (^, \A), which
 * a cut would move. *status: FBPE_ENOMEM, else FBPE_OK. */
size_t fbpe_rx_safe_cut(const fbpe_rx *p, const uint8_t *s, size_t n, size_t hi,
                        fbpe_status *status);

/* FBPE_OK if every jump, atom and table entry of p stays in bounds; FBPE_EINVALID if not.
 * The program comes from our own compiler, but a C structure is checked before it runs. */
fbpe_status fbpe_rx_check(const fbpe_rx *p);

/* Fills p->linear from p's code; p must have passed fbpe_rx_check. */
void fbpe_rx_prepare(fbpe_rx *p);

#endif
