"""What the verdicts say about the whole set, weighted by the sample design, and how far the annotators agree.

Each annotated distractor i gets y_i, the share of its annotators (skips left out) who judged it valid
(`different`). Its weight is N_h / m_h: the size of its stratum over the stratum's annotated draws.

- Share valid of the whole set: the stratified estimator p = Σ_h W_h p_h (W_h = N_h / N over strata with an
  annotated draw), variance V = Σ_h W_h² (1 − m_h/N_h) s_h² / m_h (s_h²: the sample variance of y in the stratum).
  Exact Clopper–Pearson intervals per stratum do not add up, so the interval is Wilson's score interval at the
  design's effective sample size n* = p(1 − p)/V (Kish's design effect; at most the annotated count, and equal to
  it when V is 0, e.g. every draw valid), as Korn & Graubard (1998) do for the exact interval.
- Precision and recall of a validator verdict (a rule reason, a suspect note, the judge): weighted proportions in
  a domain (precision: the distractors the verdict hit, share judged invalid; recall: the distractors judged
  invalid, weighted by the share of annotators who did, share the verdict hit), with Wilson's interval at Kish's
  effective size (Σw)² / Σw².
- Agreement: Cohen's kappa for two annotators, Fleiss' kappa for more, on the items every one of them judged.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import polars as pl

#: The normal quantile of a 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A proportion with its 95% interval, the annotated items behind it and the effective sample size."""

    value: float | None
    low: float | None
    high: float | None
    items: int
    effective: float | None


NONE = Estimate(None, None, None, 0, None)


def wilson(p: float, n: float) -> tuple[float, float]:
    """Wilson's 95% score interval of proportion `p` at (possibly fractional) sample size `n` > 0."""
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def stratified_share(y: np.ndarray, strata: list[str], population: dict[str, int]) -> Estimate:
    """The stratified estimate of the mean of `y` over the whole set (see the module), with its interval.
    `strata[i]` names the stratum of y[i]; `population` holds every stratum's size N_h."""
    groups: dict[str, list[float]] = {}
    for value, stratum in zip(y.tolist(), strata):
        groups.setdefault(stratum, []).append(value)
    if not groups:
        return NONE
    total = sum(population[h] for h in groups)
    mean = variance = 0.0
    for h, values in groups.items():
        weight, m = population[h] / total, len(values)
        mean += weight * float(np.mean(values))
        s2 = float(np.var(values, ddof=1)) if m > 1 else 0.0
        variance += weight * weight * (1 - m / population[h]) * s2 / m
    annotated = len(y)
    effective = annotated if variance <= 0 else min(annotated, mean * (1 - mean) / variance)
    if effective <= 0:  # p is 0 or 1 with a positive variance cannot happen; guards fractional y
        effective = annotated
    return Estimate(mean, *wilson(mean, effective), annotated, effective)


def domain_share(hit: np.ndarray, weight: np.ndarray) -> Estimate:
    """The weighted share of `hit` (0..1 per item) among items of weight `weight` (0: outside the domain), with
    Wilson's interval at Kish's effective size."""
    inside = weight > 0
    if not inside.any():
        return NONE
    w, h = weight[inside], hit[inside]
    value = float((w * h).sum() / w.sum())
    effective = float(w.sum() ** 2 / (w * w).sum())
    return Estimate(value, *wilson(value, effective), int(inside.sum()), effective)


def cohen_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa of two annotators' verdicts on the same items (None when chance agreement is certain)."""
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second)) / n
    left, right = Counter(first), Counter(second)
    expected = sum(left[c] * right[c] for c in left) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def fleiss_kappa(ratings: list[list[str]]) -> float | None:
    """Fleiss' kappa of items each judged by the same number (≥ 2) of annotators (one list of verdicts per item)."""
    if not ratings:
        return None
    raters = len(ratings[0])
    categories = sorted({verdict for item in ratings for verdict in item})
    counts = np.array([[item.count(c) for c in categories] for item in ratings], dtype=float)
    agreement = ((counts * (counts - 1)).sum(axis=1) / (raters * (raters - 1))).mean()
    shares = counts.sum(axis=0) / counts.sum()
    expected = float((shares * shares).sum())
    return None if expected == 1 else float((agreement - expected) / (1 - expected))


def agreement(verdicts: pl.DataFrame, annotators: list[str]) -> tuple[str, float | None, int]:
    """(method, kappa, items) over the items every annotator judged (skips left out); `verdicts` has columns
    item, annotator, verdict."""
    judged = verdicts.filter(pl.col("verdict") != "skip")
    wide = judged.pivot(on="annotator", index="item", values="verdict").drop_nulls()
    columns = [wide[name].to_list() for name in annotators if name in wide.columns]
    if len(columns) < len(annotators):
        return ("cohen" if len(annotators) == 2 else "fleiss"), None, 0
    if len(annotators) == 2:
        return "cohen", cohen_kappa(*columns), wide.height
    return "fleiss", fleiss_kappa([list(row) for row in zip(*columns)]), wide.height
