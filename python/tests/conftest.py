"""Locations of the test models.

The corpus: $GRAPNEL_CORPUS, else ../shared/corpus next to the repository
root (tests that need it skip when it is absent). The golden models:
tests/data/golden under the repository root ($GRAPNEL_REPO overrides the
root, for a copy of these tests run from elsewhere)."""
import os
import pathlib

import pytest

REPO = pathlib.Path(os.environ.get("GRAPNEL_REPO") or pathlib.Path(__file__).resolve().parents[2])
CORPUS = pathlib.Path(os.environ.get("GRAPNEL_CORPUS") or (REPO.parent / "shared" / "corpus"))
GOLDEN = REPO / "tests" / "data" / "golden"


@pytest.fixture(scope="session")
def corpus() -> pathlib.Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (set GRAPNEL_CORPUS)")
    return CORPUS


@pytest.fixture(scope="session")
def golden() -> pathlib.Path:
    if not GOLDEN.is_dir():
        pytest.skip(f"golden models not found at {GOLDEN} (set GRAPNEL_REPO)")
    return GOLDEN
