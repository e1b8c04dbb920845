"""Grouped horizontal bar figures, shared by the analysis figures (X-Change, M-Change) and Table 2's figure.

A row of bars (one per model) per category, the category's label on one line at the left. Labels are stacked
vertically and the figure grows with the number of categories and models, so no two labels overlap however many
there are; the legend sits under the plot, outside the axes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

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


def save(fig: Figure, pdf: str | Path, png: str | Path) -> None:
    """Write a figure as PDF and as a 300 dpi PNG, then free it."""
    fig.savefig(pdf)
    fig.savefig(png, dpi=300)
    plt.close(fig)
