"""Real material for the Python tests: a visible skip locally, a failure where it is required.

Required when the environment variable CI is set (as in CI) or CMALIGN_REQUIRE_MATERIAL=1.
"""
import os

import pytest


def required():
    ci = os.environ.get("CI", "")
    return (ci not in ("", "0", "false")) or os.environ.get("CMALIGN_REQUIRE_MATERIAL") == "1"


def needs(path):
    """A mark for a test (or a module's pytestmark) that reads `path`."""
    if path.exists() or required():
        # Where required, the test runs and fails on the missing file instead of skipping.
        return pytest.mark.real_material
    return pytest.mark.skip(reason=f"missing real material: {path}")
