/* The class table; the scanners are in scanners.h, the safe cuts in cuts.c. See scan.h. */
#include "scanners.h"

#include <string.h>

/* 1.1 MB, written once: the modules that scan all read this one copy. */
static fbpe_classes classes;
static int installed = 0;

const fbpe_classes *fbpe_install_classes(const uint8_t *table, const uint32_t *fold_cps,
                                         const char *fold_letters, size_t count) {
    if (installed) return &classes;
    memcpy(classes.cls, table, FBPE_CODE_POINTS);
    memset(classes.ascii_fold, 0, sizeof classes.ascii_fold);
    for (const char *c = "delmrstv"; *c; c++) {
        classes.ascii_fold[(unsigned char)*c] = *c;
        classes.ascii_fold[(unsigned char)(*c - 'a' + 'A')] = *c;
    }
    classes.num_folds = count < FBPE_MAX_FOLDS ? count : FBPE_MAX_FOLDS;
    for (size_t k = 0; k < classes.num_folds; k++) {
        classes.fold_cp[k] = fold_cps[k];
        classes.fold_letter[k] = fold_letters[k];
    }
    installed = 1;
    return &classes;
}

size_t fbpe_piece_end(const fbpe_classes *cl, fbpe_scanner which, const uint8_t *s, size_t i,
                      size_t n) {
#define SCAN_CASE(WHICH, END_FN)                                                               \
    case WHICH:                                                                                \
        return END_FN(cl, s, i, n);
    switch ((int)which) {
        FBPE_FOR_EACH_SCANNER(SCAN_CASE)
    default:
        return n; /* not a scanner: one piece, never a read out of bounds */
    }
#undef SCAN_CASE
}
