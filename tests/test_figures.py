"""Figures a reader can read: at full size (17 UPOS groups, 10 Table 2 columns, 5 models with long labels, 2
views) no two texts overlap, the legend covers no bar, nothing is cut off; the bars show exact intervals."""

import itertools

import numpy as np
import polars as pl
import pytest
from clsd.analysis import figures as shift_figures
from clsd.report import figures
from matplotlib.container import BarContainer
from matplotlib.patches import Rectangle
from matplotlib.text import Text

UPOS = ["ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"]
MODELS = ["paraphrase-multilingual-mpnet-base-v2", "multilingual-e5-large (query: prefix)", "EmbeddingGemma-300m",
          "gte-multilingual-base", "all-MiniLM-L6-v2 (English)"]
COLUMNS = [f"WMT{year} {direction}" for year in (19, 21, 22, 23, 24) for direction in ("DE→FR", "FR→DE")]


def shift_summary() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for model in MODELS:
        for i, group in enumerate(["ANY", *UPOS]):
            mean = float(rng.normal(-0.1, 0.05))
            rows.append({"model": model, "group": group, "n": 986 - 50 * i, "mean": mean, "ci_low": mean - 0.03, "ci_high": mean + 0.03})
    return pl.DataFrame(rows)


def table2_intervals(empty: str | None = None) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for view, model, column in itertools.product(("direct", "pivot"), MODELS, COLUMNS):
        n = 0 if column == empty else 1473
        p1 = None if n == 0 else float(rng.uniform(30, 100))
        rows.append({"view": view, "model": model, "column": column, "n": n, "p1": p1,
                     "ci_low": None if p1 is None else p1 - 2.5, "ci_high": None if p1 is None else min(p1 + 2.5, 100.0)})
    return pl.DataFrame(rows)


def overlap(a, b, tolerance: float = 0.5) -> bool:
    """Two display boxes share more than `tolerance` pixels in both directions."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance


def drawn_texts(fig) -> list[Text]:
    """Every text the figure shows: titles, axis labels, the tick labels within each axis' limits, notes in
    the plots and the legend's entries."""
    texts = [t for legend in fig.legends for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            texts += [tick.label1 for tick in axis.get_major_ticks() if low <= tick.get_loc() <= high]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def check_readable(fig) -> None:
    """No two visible texts overlap, every text lies inside the figure, the legend lies outside every axes
    (so it covers no bar) and has an entry per model."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = drawn_texts(fig)
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    frame = fig.bbox
    for text, box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, f"{text!r} is cut off"
    for (text_a, a), (text_b, b) in itertools.combinations(boxes, 2):
        assert not overlap(a, b), f"{text_a!r} overlaps {text_b!r}"
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == MODELS
    legend_box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert not overlap(legend_box, ax.get_window_extent(renderer)), "the legend lies over a plot"
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert bars and not any(overlap(legend_box, bar.get_window_extent(renderer)) for bar in bars)


def test_shift_figure_with_many_groups_and_long_labels_is_readable():
    fig = shift_figures.draw_shift_figure(shift_summary(), "x_shift")
    check_readable(fig)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:2] == ["ANY (n=986)", "ADJ (n=936)"] and len(labels) == 18  # ANY first, n beside each group
    assert len(ax.patches) == 18 * len(MODELS)
    assert fig.get_size_inches()[0] == pytest.approx(3.4)  # one paper column


def test_table2_figure_with_many_columns_and_models_is_readable_and_draws_exact_intervals():
    intervals = table2_intervals()
    fig = figures.draw_table2_figure(intervals)
    check_readable(fig)
    direct = fig.axes[0]
    assert direct.get_title() == "direct view" and [t.get_text() for t in direct.get_yticklabels()][0] == "WMT19 DE→FR (n=1473)"
    # the first model's bars: values and whiskers are the table's P@1 and bounds
    first = next(c for c in direct.containers if isinstance(c, BarContainer))
    expected = intervals.filter((pl.col("view") == "direct") & (pl.col("model") == MODELS[0]))
    assert [bar.get_width() for bar in first] == pytest.approx(expected["p1"].to_list())
    whiskers = first.errorbar.lines[2][0].get_segments()
    assert [x for segment in whiskers for x in (segment[0][0], segment[1][0])] == pytest.approx(
        [x for bounds in zip(expected["ci_low"], expected["ci_high"]) for x in bounds])


def test_table2_figure_draws_no_bar_for_a_column_without_items():
    fig = figures.draw_table2_figure(table2_intervals(empty="WMT24 FR→DE"))
    check_readable(fig)
    for ax in fig.axes:
        assert len(ax.patches) == (len(COLUMNS) - 1) * len(MODELS)
        assert [t.get_text() for t in ax.texts] == ["no items scored"]
    assert "WMT24 FR→DE (n=0)" in [t.get_text() for t in fig.axes[0].get_yticklabels()]


def test_figures_are_written_as_pdf_and_png(tmp_path):
    figures.table2_figure(table2_intervals(), tmp_path / "t.pdf", tmp_path / "t.png")
    shift_figures.shift_figure(shift_summary(), "m_shift", tmp_path / "m.pdf", tmp_path / "m.png")
    for name in ("t", "m"):
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
