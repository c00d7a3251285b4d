"""Float comparisons of the test suite: one tolerance rule and one failure message.

Two computations of the same float32 tensor (a fused and a naive path, one thread or
two, one process or two) differ by rounding that grows with the size of the terms
summed, i.e. with the tensor's scale -- not with each element's own size: an element
near 0 that is the sum of terms of size 200 carries errors of 200 x eps. So an element
passes when ``|actual - expected| <= atol + rtol * scale``, ``scale`` the largest
``|expected|`` of the whole tensor (``torch.testing.assert_close`` would use the
element's own ``|expected|``, which fails such an element). ``atol`` is the floor for
tensors that are all float noise (a gradient that is 0 in exact arithmetic).

A failure names what was compared and prints the numbers: how many elements are out,
the allowed difference and how it was made, the largest difference with its index and
both values, and the torch thread count (``SYNPREP_TEST_THREADS``, default 1, is the
count every test starts at, tests/conftest.py: run them at 1 and 2 to see both summation orders).
"""

from __future__ import annotations

import torch


def _tensors(actual, expected) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.as_tensor(actual).detach().cpu().to(torch.float64)
    b = torch.as_tensor(expected).detach().cpu().to(torch.float64)
    assert a.shape == b.shape, f"shapes differ: actual {tuple(a.shape)}, expected {tuple(b.shape)}"
    return a, b


def _check(actual, expected, rtol: float, atol: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float, float]:
    a, b = _tensors(actual, expected)
    finite = b[torch.isfinite(b)]
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    allowed = atol + rtol * scale
    bad = ~((a == b) | ((a - b).abs() <= allowed))  # NaN never passes
    return a, b, bad, scale, allowed


def close(actual, expected, *, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """Whether every element is within ``atol + rtol * max|expected|`` (the rule above)."""
    return not bool(_check(actual, expected, rtol, atol)[2].any())


def assert_close(actual, expected, *, rtol: float = 1e-5, atol: float = 1e-8, name: str = "") -> None:
    """Assert :func:`close`; the message says which elements, by how much, against what."""
    a, b, bad, scale, allowed = _check(actual, expected, rtol, atol)
    if not bad.any():
        return
    diff = (a - b).abs().masked_fill(~bad, -1.0).nan_to_num(nan=float("inf"))
    flat = int(diff.argmax())
    idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), a.shape)) if a.dim() else ()
    raise AssertionError(
        f"{name + ': ' if name else ''}{int(bad.sum())} of {a.numel()} elements differ by more than {allowed:.3g} "
        f"(atol {atol:g} + rtol {rtol:g} x scale {scale:.4g}, the largest |expected|); largest difference "
        f"{float((a - b).abs()[idx]):.3g} at index {idx}: actual {float(a[idx]):.8g}, expected {float(b[idx]):.8g}; "
        f"torch threads {torch.get_num_threads()}"
    )
