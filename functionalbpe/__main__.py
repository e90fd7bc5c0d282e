"""``python -m functionalbpe`` is the ``functionalbpe`` command."""
import sys

from .cli import main

sys.exit(main())
