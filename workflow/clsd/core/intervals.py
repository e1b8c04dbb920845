"""Uncertainty of Precision@1: exact (Clopper–Pearson) intervals per cell, a paired interval for the mean of
cells that share items (from the outcomes alone), seeds derived from what is sampled, percentile bootstrap intervals (for the
continuous shifts of the analysis), the exact McNemar test for paired models and an interval for a paired difference
of two proportions (the same items under two distractor sets, clsd.report.generator_check)."""

from __future__ import annotations

import functools
import hashlib
import json
import math

import numpy as np
from scipy import stats

#: Every interval is a 95% interval.
LEVEL = 0.95


@functools.cache
def exact_interval(successes: int, n: int) -> tuple[float, float]:
    """95% Clopper–Pearson interval of a proportion, as fractions (cached: scipy finds it by root search).

    Exact: it never reaches 0 or 1 unless the estimate does, and it is wide when `n` is small (11 of 11 gives
    0.715–1), which a percentile bootstrap (collapsing to 1–1) cannot show.
    """
    if n <= 0:
        raise ValueError("the interval of a proportion of zero items is undefined")
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=LEVEL, method="exact")
    return float(ci.low), float(ci.high)


def exact_interval_effective(estimate: float, n_effective: float) -> tuple[float, float]:
    """Clopper–Pearson at an effective sample size: the beta quantiles of `estimate × n` successes out of `n`,
    which need not be whole numbers (Korn & Graubard 1998). Equal to `exact_interval` for whole numbers."""
    x = estimate * n_effective
    alpha = 1.0 - LEVEL
    low = 0.0 if x <= 0.0 else float(stats.beta.ppf(alpha / 2, x, n_effective - x + 1))
    high = 1.0 if x >= n_effective else float(stats.beta.ppf(1 - alpha / 2, x + 1, n_effective - x))
    return low, high


def paired_mean_interval(groups: list[np.ndarray]) -> tuple[float, float]:
    """95% interval of the mean of several proportions (columns) whose items are shared within groups.

    `groups` holds one boolean matrix per set of shared items (rows = items, columns = the proportions that
    score those items, e.g. the two directions of one dataset); every column has the same weight in the mean.
    The mean's variance is that of resampling items, each group's rows jointly for all its columns (so correlated
    columns are not counted as independent evidence), computed exactly rather than drawn: the variance of a
    group's weighted row sums over its items, divided by their number (the limit a bootstrap approaches as its
    replicates grow). So the interval depends on the outcomes alone: two models with the same outcomes get the
    same interval. The variance is turned into an effective number of items n = m(1 − m)/variance, kept between the
    number of items (columns of a group perfectly correlated) and the number of outcomes (all columns
    independent); the interval is Clopper–Pearson at that size (Korn & Graubard 1998). When every outcome is a
    success (or every one a failure) the variance is 0 and the smaller size is used, so the interval stays as wide
    as the items allow instead of collapsing onto the estimate.
    """
    groups = [np.asarray(g, dtype=np.float64) for g in groups]
    weight = 1.0 / sum(g.shape[1] for g in groups)
    mean = weight * sum(float(g.mean(axis=0).sum()) for g in groups)
    variance = sum(float((weight * g.sum(axis=1)).var()) / g.shape[0] for g in groups)
    n_items = 1.0 / sum((weight * g.shape[1]) ** 2 / g.shape[0] for g in groups)
    n_outcomes = 1.0 / sum(weight**2 * g.shape[1] / g.shape[0] for g in groups)
    if variance > 0.0 and 0.0 < mean < 1.0:
        n_effective = min(max(mean * (1.0 - mean) / variance, n_items), n_outcomes)
    else:
        n_effective = n_outcomes if 0.0 < mean < 1.0 else n_items
    return exact_interval_effective(mean, n_effective)


def identity_rng(seed: int, *identity: str) -> np.random.Generator:
    """A generator seeded by `seed` and what is being resampled (e.g. view, model, datasets), not by its position
    in a table: adding a model or a dataset leaves every other interval as it was."""
    digest = hashlib.sha256(json.dumps(identity, ensure_ascii=False).encode("utf-8")).digest()
    return np.random.default_rng(np.random.SeedSequence([seed, int.from_bytes(digest[:16], "big")]))


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


def wilson_interval(successes: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion, as fractions."""
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=LEVEL, method="wilson")
    return float(ci.low), float(ci.high)


def paired_difference_interval(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float]:
    """95% interval of p_b − p_a, two proportions on the same n items (counts of items both, only A, only B and
    neither get right): Newcombe's hybrid score interval for paired data (method 10 of Newcombe 1998), from the two
    Wilson intervals and the correlation of the pairs, with his correction of a positive correlation
    (max(both·neither − only_a·only_b − n/2, 0) in its numerator), without which two sets that agree on every item
    would get an interval of width 0. It stays inside [−1, 1] and is wide on few items."""
    n = both + only_a + only_b + neither
    if n <= 0:
        raise ValueError("the interval of a difference on zero items is undefined")
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    low_a, high_a = wilson_interval(both + only_a, n)
    low_b, high_b = wilson_interval(both + only_b, n)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    association = both * neither - only_a * only_b
    if association > 0:
        association = max(association - n / 2, 0.0)
    phi = association / math.sqrt(margins) if margins else 0.0
    below = math.sqrt(max(0.0, (p_b - low_b) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a) + (high_a - p_a) ** 2))
    above = math.sqrt(max(0.0, (high_b - p_b) ** 2 - 2 * phi * (high_b - p_b) * (p_a - low_a) + (p_a - low_a) ** 2))
    difference = p_b - p_a
    return max(-1.0, difference - below), min(1.0, difference + above)
