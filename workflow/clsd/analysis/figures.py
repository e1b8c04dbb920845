"""The X-Change and M-Change figures (paper Figures 2 and 3): mean normalised shift per POS group and model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from clsd.core.plots import STYLE, figure_height, grouped_bars, legend_below, plt, save

TITLES = {"x_shift": "Cross-lingual change (X-Change)", "m_shift": "Monolingual change (M-Change)"}


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


def shift_figure(summary: pl.DataFrame, kind: str, pdf: str | Path, png: str | Path) -> None:
    """Write the X-Change (`kind` x_shift) or M-Change (m_shift) figure (`draw_shift_figure`)."""
    save(draw_shift_figure(summary, kind), pdf, png)
