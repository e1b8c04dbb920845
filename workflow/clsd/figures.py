"""The X-Change and M-Change figures (paper Figures 2 and 3): mean normalised shift per POS group and model."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

TITLES = {"x_shift": "Cross-lingual change (X-Change)", "m_shift": "Monolingual change (M-Change)"}


def shift_figure(summary: pl.DataFrame, kind: str, pdf: str | Path, png: str | Path) -> None:
    """Grouped bars (one per model) per POS group, ANY first, 95% bootstrap CI whiskers, n under each group.

    Sized for one paper column (3.4 in wide); group sizes are those of the first model (equal for all).
    """
    models = summary["model"].unique(maintain_order=True).to_list()
    groups = ["ANY"] + sorted(g for g in summary["group"].unique().to_list() if g != "ANY")
    width = 0.8 / max(len(models), 1)
    plt.rcParams.update({"font.size": 7, "axes.titlesize": 8, "legend.fontsize": 6, "xtick.labelsize": 5.5})
    fig, ax = plt.subplots(figsize=(3.4, 2.6), constrained_layout=True)
    x = np.arange(len(groups))
    for i, model in enumerate(models):
        part = {r["group"]: r for r in summary.filter(pl.col("model") == model).iter_rows(named=True)}
        means = np.array([part[g]["mean"] if g in part else np.nan for g in groups])
        low = np.array([part[g]["ci_low"] if g in part else np.nan for g in groups])
        high = np.array([part[g]["ci_high"] if g in part else np.nan for g in groups])
        errors = np.nan_to_num(np.vstack([means - low, high - means]), nan=0.0)
        ax.bar(x + (i - (len(models) - 1) / 2) * width, means, width, yerr=errors, capsize=1.5, label=model, error_kw={"linewidth": 0.6})
    first = {r["group"]: r["n"] for r in summary.filter(pl.col("model") == models[0]).iter_rows(named=True)} if models else {}
    ax.set_xticks(x, [f"{g}\nn={first.get(g, 0)}" for g in groups])
    ax.axhline(0.0, color="black", linewidth=0.5)
    ax.set_ylabel("normalised shift")
    ax.set_title(TITLES[kind])
    ax.legend(frameon=False, ncols=min(len(models), 2), loc="upper center", bbox_to_anchor=(0.5, -0.2))
    fig.savefig(pdf)
    fig.savefig(png, dpi=300)
    plt.close(fig)


def table2_figure(intervals: pl.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Table 2 as grouped bars: one panel per view, a group per dataset × direction, a bar per model with
    its 95% bootstrap interval (`intervals`: view, model, column, p1, ci_low, ci_high, in table order)."""
    views = intervals["view"].unique(maintain_order=True).to_list()
    models = intervals["model"].unique(maintain_order=True).to_list()
    columns = intervals["column"].unique(maintain_order=True).to_list()
    width = 0.8 / max(len(models), 1)
    plt.rcParams.update({"font.size": 7, "axes.titlesize": 8, "legend.fontsize": 6, "xtick.labelsize": 6})
    fig, axes = plt.subplots(1, len(views), figsize=(3.4 * len(views), 2.6), constrained_layout=True, squeeze=False, sharey=True)
    x = np.arange(len(columns))
    for ax, view in zip(axes[0], views):
        for i, model in enumerate(models):
            part = {r["column"]: r for r in intervals.filter((pl.col("view") == view) & (pl.col("model") == model)).iter_rows(named=True)}
            values = np.array([part[c]["p1"] if c in part else np.nan for c in columns])
            low = np.array([part[c]["ci_low"] if c in part else np.nan for c in columns])
            high = np.array([part[c]["ci_high"] if c in part else np.nan for c in columns])
            errors = np.nan_to_num(np.vstack([values - low, high - values]), nan=0.0)
            ax.bar(x + (i - (len(models) - 1) / 2) * width, values, width, yerr=errors, capsize=1.5, label=model, error_kw={"linewidth": 0.6})
        ax.set_xticks(x, columns, rotation=20, ha="right")
        ax.set_ylim(0, 100)
        ax.set_title(f"{view} view")
    axes[0][0].set_ylabel("Precision@1 (%)")
    axes[0][0].legend(frameon=False, ncols=min(len(models), 2), loc="lower left")
    fig.savefig(pdf)
    fig.savefig(png, dpi=300)
    plt.close(fig)
