"""The Unicode tables and the pattern compiler that the compiled scanners read, below the
kernel that runs them: character classes measured from ``regex`` (``charclasses``), the
boundary markers' unit classes and case maps (``markerclasses``), and a pre-tokenization
regex compiled to a program for ``csrc/lib/scan/regex_vm.c`` (``regex_program``, with its limits
in ``pattern_limits``)."""
