"""The X-Change and M-Change figures (paper Figures 2 and 3) and Table 2 as a figure.

Both are grouped horizontal bars: a row of bars (one per model) per category, the category's label on one
line at the left. Labels are stacked vertically and the figure grows with the number of categories and
models, so no two labels overlap however many there are; the legend sits under the plot, outside the axes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

TITLES = {"x_shift": "Cross-lingual change (X-Change)", "m_shift": "Monolingual change (M-Change)"}
#: Font sizes (points) of a figure set for one paper column.
STYLE = {"font.size": 7, "axes.titlesize": 8, "legend.fontsize": 6, "xtick.labelsize": 6, "ytick.labelsize": 6}
#: Height of one bar and the gap between categories, in inches.
BAR_HEIGHT, GROUP_GAP = 0.07, 0.1
#: Legend entries longer than this many characters are listed one per line.
LONG_LABEL = 24


def figure_height(n_groups: int, n_models: int) -> float:
    """Inches: room for every bar plus title, axis and a legend of `n_models` entries under the plot."""
    legend_rows = n_models if n_models > 2 else 1
    return 0.8 + n_groups * (n_models * BAR_HEIGHT + GROUP_GAP) + 0.12 * legend_rows


def grouped_bars(ax: Axes, labels: list[str], series: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Horizontal bars: a group per label (first at the top), a bar per series (label, value, low, high) with its
    interval as a whisker. Missing values (NaN) draw no bar."""
    height = 0.8 / max(len(series), 1)
    y = np.arange(len(labels))
    for i, (name, values, low, high) in enumerate(series):
        shown = np.isfinite(values)
        offsets = y[shown] + (i - (len(series) - 1) / 2) * height
        errors = np.vstack([values[shown] - low[shown], high[shown] - values[shown]])
        ax.barh(offsets, values[shown], height, xerr=np.nan_to_num(errors, nan=0.0), capsize=1.2, label=name,
                color=f"C{i % 10}", error_kw={"linewidth": 0.6})
    ax.set_yticks(y, labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.tick_params(axis="y", length=0)


def legend_below(fig: Figure, ax: Axes) -> None:
    """The models' legend under the plot, outside every axes; one entry per line when labels are long."""
    handles, names = ax.get_legend_handles_labels()
    ncols = 1 if len(names) <= 1 or max(len(n) for n in names) > LONG_LABEL else min(len(names), 2)
    fig.legend(handles, names, loc="outside lower center", ncols=ncols, frameon=False)


def draw_shift_figure(summary: pl.DataFrame, kind: str) -> Figure:
    """Mean normalised shift per POS group (ANY first) and model with its 95% bootstrap interval, n beside each
    group's name. One paper column wide (3.4 in); group sizes are those of the first model (equal for all)."""
    models = summary["model"].unique(maintain_order=True).to_list()
    groups = ["ANY"] + sorted(g for g in summary["group"].unique().to_list() if g != "ANY")
    first = {r["group"]: r["n"] for r in summary.filter(pl.col("model") == models[0]).iter_rows(named=True)} if models else {}
    series = []
    for model in models:
        part = {r["group"]: r for r in summary.filter(pl.col("model") == model).iter_rows(named=True)}
        column = [[part[g][key] if g in part and part[g][key] is not None else np.nan for g in groups] for key in ("mean", "ci_low", "ci_high")]
        series.append((model, *(np.array(c, dtype=np.float64) for c in column)))
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(3.4, figure_height(len(groups), len(models))), layout="constrained")
        grouped_bars(ax, [f"{g} (n={first.get(g, 0)})" for g in groups], series)
        ax.axvline(0.0, color="black", linewidth=0.5)
        ax.set_xlabel("normalised shift")
        ax.set_title(TITLES[kind])
        legend_below(fig, ax)
    return fig


def draw_table2_figure(intervals: pl.DataFrame) -> Figure:
    """Table 2 as grouped bars: one panel per view, a group per dataset × direction (with its n), a bar per model
    with its exact 95% interval (`intervals`: view, model, column, n, p1, ci_low, ci_high, in table order). A
    column with zero items draws no bar and says so."""
    views = intervals["view"].unique(maintain_order=True).to_list()
    models = intervals["model"].unique(maintain_order=True).to_list()
    columns = intervals["column"].unique(maintain_order=True).to_list()
    n_items = {r["column"]: r["n"] for r in intervals.unique("column", keep="first", maintain_order=True).iter_rows(named=True)}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(views), figsize=(1.2 + 2.6 * len(views), figure_height(len(columns), len(models))),
                                 layout="constrained", squeeze=False, sharey=True)
        for ax, view in zip(axes[0], views):
            series = []
            for model in models:
                part = {r["column"]: r for r in intervals.filter((pl.col("view") == view) & (pl.col("model") == model)).iter_rows(named=True)}
                column = [[part[c][key] if c in part and part[c][key] is not None else np.nan for c in columns] for key in ("p1", "ci_low", "ci_high")]
                series.append((model, *(np.array(c, dtype=np.float64) for c in column)))
            grouped_bars(ax, [f"{c} (n={n_items[c]})" for c in columns], series)
            for y, c in enumerate(columns):
                if n_items[c] == 0:
                    ax.text(2, y, "no items scored", va="center", fontsize=5.5, color="0.3")
            ax.set_xlim(0, 101.5)  # a whisker ending at 100 stays visible
            ax.set_xlabel("Precision@1 (%)")
            ax.set_title(f"{view} view")
        legend_below(fig, axes[0][0])
    return fig


def save(fig: Figure, pdf: str | Path, png: str | Path) -> None:
    """Write a figure as PDF and as a 300 dpi PNG, then free it."""
    fig.savefig(pdf)
    fig.savefig(png, dpi=300)
    plt.close(fig)


def shift_figure(summary: pl.DataFrame, kind: str, pdf: str | Path, png: str | Path) -> None:
    """Write the X-Change (`kind` x_shift) or M-Change (m_shift) figure (`draw_shift_figure`)."""
    save(draw_shift_figure(summary, kind), pdf, png)


def table2_figure(intervals: pl.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Write Table 2 as a figure (`draw_table2_figure`)."""
    save(draw_table2_figure(intervals), pdf, png)
