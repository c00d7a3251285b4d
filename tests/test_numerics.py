"""tests/numerics.py: a tolerance that follows the tensor's scale, and a failure
message with the numbers (issue 21, item 1)."""

from __future__ import annotations

import pytest
import torch

from tests.numerics import assert_close, close


def test_the_tolerance_follows_the_scale_of_the_tensor():
    # a gradient whose largest element is 220 and one element near 0 off by 4.6e-5 (the
    # rounding of sums of terms of size 220): within 1e-5 of the scale, though 4.6e-5 is
    # far more than 1e-4 of the element's own size
    expected = torch.tensor([220.0, -3.0, 0.01, 0.0])
    actual = expected + torch.tensor([0.0, 0.0, 4.6e-5, 0.0])
    assert close(actual, expected, rtol=1e-5, atol=1e-5)
    assert_close(actual, expected, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(actual, expected, rtol=1e-4, atol=1e-5)  # the element-wise rule fails it
    # a real error (a tenth of the scale) fails
    assert not close(expected + torch.tensor([0.0, 22.0, 0.0, 0.0]), expected)
    assert not close(torch.tensor([float("nan")]), torch.tensor([1.0]))
    assert close([1.0, 2.0], [1.0, 2.0], rtol=0, atol=0)


def test_a_failure_prints_the_numbers():
    expected = torch.zeros(3, 4)
    expected[0, 0] = 220.0
    actual = expected.clone()
    actual[2, 1] = 0.5
    with pytest.raises(AssertionError) as e:
        assert_close(actual, expected, rtol=1e-5, atol=1e-5, name="tgt_embed.tok.weight")
    msg = str(e.value)
    assert msg.startswith("tgt_embed.tok.weight: 1 of 12 elements differ by more than 0.00221")
    assert "scale 220" in msg and "largest difference 0.5 at index (2, 1): actual 0.5, expected 0" in msg
    assert "torch threads" in msg
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_close(torch.zeros(2), torch.zeros(3))
