# UTF-8 for the compiled modules: the C core's validator (csrc/lib/common/utf8.h), and the one way a
# Python str becomes the UTF-8 the core reads.
from libc.stdint cimport uint8_t


cdef extern from "lib/common/utf8.h":
    size_t fbpe_utf8_invalid(const uint8_t *s, size_t n, int allow_surrogates,
                             int *incomplete_tail) nogil


cdef inline bytes utf8_bytes(str text):
    """The UTF-8 of ``text``; a lone surrogate (which a Python str may hold) is written as
    "surrogatepass" writes it, which the scanners and the describer accept."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
