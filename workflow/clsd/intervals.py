"""Uncertainty of Precision@1: percentile bootstrap intervals and the exact McNemar test for paired models."""

from __future__ import annotations

import numpy as np
from scipy import stats


def bootstrap_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """`n_boot` means of resamples (with replacement) of `values`."""
    values = np.asarray(values, dtype=np.float64)
    return values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)


def percentile_interval(means: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap replicates."""
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_ci(values: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean (NaN for fewer than two values)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return (float("nan"), float("nan"))
    return percentile_interval(bootstrap_means(values, n_boot, np.random.default_rng(seed)))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (items only A, only B gets right)."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(min(only_a, only_b), discordant, 0.5).pvalue)


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
