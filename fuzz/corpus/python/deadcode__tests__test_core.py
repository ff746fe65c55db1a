from app.core import used


def test_used():
    assert used(1) == 3


def helper_for_tests():
    return 1
