"""Student-t quantiles for the reference computations of the statistics
tests, from the closed-form CDF (no scipy on the test machines)."""
import math


def t_two_sided_mass(t, df):
    # P(|T| < t) for integer df, A&S 26.7.3 (odd) and 26.7.4 (even).
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2 == 1:
        total, term = 0.0, c
        for k in range(1, (df - 1) // 2 + 1):
            if k > 1:
                term *= c * c * (2 * k - 2) / (2 * k - 1)
            total += term
        return 2 / math.pi * (theta + s * total) if df > 1 else 2 * theta / math.pi
    total, term = 1.0, 1.0
    for k in range(1, (df - 2) // 2 + 1):
        term *= c * c * (2 * k - 1) / (2 * k)
        total += term
    return s * total

def t_975(df):
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_two_sided_mass(mid, df) < 0.95:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
