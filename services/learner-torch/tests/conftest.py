"""Paths of the committed fixtures (made by the independent reference in scripts/reference/) and
a tiny-model learner factory shared by the tests."""
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_ROOT.parents[1]
sys.path.insert(0, str(PACKAGE_ROOT))

LM_FIXTURES = REPO_ROOT / "packages" / "lm" / "test" / "fixtures"
ALGORITHM_FIXTURES = REPO_ROOT / "services" / "learner" / "test" / "fixtures" / "algorithms"


@pytest.fixture(scope="session")
def lm_fixtures() -> Path:
    return LM_FIXTURES


@pytest.fixture(scope="session")
def algorithm_fixtures() -> Path:
    return ALGORITHM_FIXTURES
