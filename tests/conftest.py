"""Shared fixtures.

* ``corpora`` — the path of ``../shared/corpora`` (or ``$FUNCTIONALBPE_CORPORA``); tests that
  use it are skipped cleanly on a machine that has only the project.
* hypothesis profiles: ``default`` (what CI runs), ``thorough`` (more examples); choose with
  ``HYPOTHESIS_PROFILE=thorough``. ``FUNCTIONALBPE_EXAMPLES=N`` overrides the example count.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings

    _examples = os.environ.get("FUNCTIONALBPE_EXAMPLES")
    _common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.register_profile("default", max_examples=int(_examples or 100), **_common)
    settings.register_profile("thorough", max_examples=int(_examples or 2000), **_common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass

ROOT = Path(__file__).resolve().parent.parent


def corpora_path() -> Path:
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    return Path(env) if env else ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpora() -> Path:
    path = corpora_path()
    if not path.is_dir():
        pytest.skip(f"shared corpora not found at {path} (set FUNCTIONALBPE_CORPORA)")
    return path


def read_corpus(path: Path, limit: int | None = None) -> str:
    """Read a corpus file as text, at most ``limit`` characters (cut at a line end)."""
    text = path.read_text(encoding="utf-8")
    if limit is not None and len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        text = text[: cut + 1 if cut > 0 else limit]
    return text
