"""Table 2 as a figure: a panel per view, grouped horizontal bars with their exact 95% intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from clsd.core.plots import STYLE, figure_height, grouped_bars, legend_below, plt, save


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


def table2_figure(intervals: pl.DataFrame, pdf: str | Path, png: str | Path) -> None:
    """Write Table 2 as a figure (`draw_table2_figure`)."""
    save(draw_table2_figure(intervals), pdf, png)
