"""`rounded(x, digits)`: `round(x, digits)` to the same float, without its decimal conversion in the usual case.

`round(x, 3)` on a float finds the correctly rounded decimal digits and converts them back, which
costs about as much as formatting the number; an estimate rounds some eighty figures. For a
positive `y = x × 10^digits` below 2^40 the float `y` is within 2^-13 of the exact product, so when
`y` lies more than 0.001 from a half-integer the exact product rounds to the same whole `k` as `y`
does, and `k / 10^digits` (a correctly rounded division of two exact numbers) is the float nearest
the decimal `k·10^-digits`: what `round` returns. Every other value (zero, negative, huge, near a
tie) goes to `round` itself.
"""

from __future__ import annotations

__all__ = ["gb", "rounded"]

_SCALES = tuple(10.0 ** d for d in range(16))  # exact in binary floating point
_LIMIT = 2.0 ** 40


def rounded(x: float, digits: int) -> float:
    """`round(x, digits)` (0 ≤ digits < 16), the same value (an int stays an int)."""
    scale = _SCALES[digits]
    y = x * scale
    if 0.0 < y < _LIMIT and type(x) is float:
        k = round(y)
        if -0.499 < y - k < 0.499:
            return k / scale
    return round(x, digits)


def gb(value: float) -> float:
    """Bytes in decimal GB to three decimals: `round(value / 1e9, 3)`, the same float.

    `value / 1e6` stands for `x × 1000` (x = value / 1e9, a float): below 2^40 it lies within 2^-12 of
    the exact product (two roundings of 2^-53 relative each), so the margin of `rounded` still holds.
    """
    y = value / 1e6
    if 0.0 < y < _LIMIT:
        k = round(y)
        if -0.499 < y - k < 0.499:
            return k / 1000.0
    x = value / 1e9
    return x if x == 0.0 else round(x, 3)  # a zero (of either sign) rounds to itself
