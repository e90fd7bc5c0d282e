# The status codes of the C core (csrc/lib/common/bounds.h), and the one place where they become
# Python exceptions: every compiled module cimports `check` from here.

cdef extern from "lib/common/bounds.h":
    ctypedef enum fbpe_status:
        FBPE_OK
        FBPE_MORE
        FBPE_ENOMEM
        FBPE_EOVERFLOW
        FBPE_ETOOLONG
        FBPE_EIDS
        FBPE_EINTERNAL
        FBPE_EINVALID
        FBPE_EUTF8
        FBPE_EPATTERN
    size_t FBPE_MAX_VOCAB_SIZE, FBPE_MAX_TOKEN_BYTES, FBPE_MAX_TOTAL_TOKEN_BYTES
    int FBPE_MAX_THREADS
    size_t fbpe_grow_to(size_t cap, size_t start, size_t want, size_t size) nogil


cdef inline int check(int status, str doing, str why=None) except -1:
    """``status`` itself when it is not an error, else the exception it stands for.

    ``doing`` says what the call was doing ("while counting pieces"), for the messages of no
    memory and of a bug; ``why`` says what was wrong with the input, where the caller knows
    it better than the code does (FBPE_EINVALID above all).
    """
    if status >= 0:
        return status
    if status == FBPE_ENOMEM:
        raise MemoryError(f"out of memory {doing}")
    if status == FBPE_EOVERFLOW:
        raise OverflowError(why or "the piece counts are too large: the sum over pieces of count x "
                            "(symbols - 1) must stay below 2**63; divide the counts by a common factor")
    if status == FBPE_EIDS:
        raise OverflowError(why or "the merges would need ids of 2**32 - 1 and above")
    if status == FBPE_ETOOLONG:
        raise ValueError(why or "a piece of 2**32 symbols or more, or 2**32 distinct pieces or more")
    if status == FBPE_EINVALID:
        raise ValueError(why or "the input breaks a rule or a limit of the C core (csrc/lib/common/bounds.h)")
    if status == FBPE_EUTF8:
        raise ValueError(why or "the bytes are not valid UTF-8")
    if status == FBPE_EPATTERN:
        # Not an error of the text: the compiled pattern's matcher gave up (no non-empty
        # match at some place, or its step budget spent); the caller runs regex instead.
        from functionalbpe.errors import CompiledPatternGaveUp
        raise CompiledPatternGaveUp(why or f"the compiled pattern gave up {doing}")
    raise RuntimeError(f"internal error {status} {doing} in the C core (a bug; please report it)")
