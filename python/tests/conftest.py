import os

import pytest

SRC = os.environ.get("PTO_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("PTO_BUILD_DIR", os.path.join(SRC, "build"))


@pytest.fixture
def src():
    return SRC


@pytest.fixture
def build():
    return BUILD
