/* How a text is cut into pieces: by the scanner of a built-in pattern (scan.h), by a
 * compiled pattern's program (regex_vm.h), or into the boundary-marker scheme's pieces
 * (markers.h). The counter (count.h) and the encoder
 * (encode_text.h) both take one; each inlines the scanner it names into its own loop. */
#ifndef FBPE_SPLITTER_H
#define FBPE_SPLITTER_H

#include "markers.h"
#include "regex_vm.h"
#include "scan.h"

typedef struct {
    const fbpe_markers *markers; /* not NULL: the marker scheme's pieces under `options` */
    int options;
    const fbpe_classes *classes; /* otherwise: the pieces of the pattern `which` */
    fbpe_scanner which;
    const fbpe_rx *prog; /* not NULL: the pieces of this compiled pattern (markers NULL) */
    int whole;           /* not 0: each text is one piece (the encoder's units are pieces) */
} fbpe_splitter;

#endif
