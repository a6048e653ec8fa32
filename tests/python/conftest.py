"""Shared settings for the Python tests: where the repository is (for its
configs), set by ctest (tests/CMakeLists.txt) or found from this file."""

import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("GRAPHWORLD_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def gpu_rates():
    return SOURCE_DIR / "configs" / "gpu_rates.yaml"
