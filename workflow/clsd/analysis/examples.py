"""Qualitative material: a seeded sample of successful distractors with the models they tricked (Table 5),
and the items a model gets right directly but wrong through the English pivot."""

from __future__ import annotations

import polars as pl

from clsd.core.items import direction_label


def texts_of(candidates: pl.DataFrame, direction: str) -> pl.DataFrame:
    """Per item of a direction: its source and true target texts."""
    src, tgt = direction.split("-")
    source = candidates.filter((pl.col("lang") == src) & (pl.col("slot") == 0)).select("id", pl.col("text").alias("source"))
    target = candidates.filter((pl.col("lang") == tgt) & (pl.col("slot") == 0)).select("id", pl.col("text").alias("target"))
    return source.join(target, on="id")


def tricked(successful: pl.DataFrame, candidates: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Successful distractors (dataset, direction, id, k) with their texts and the models they tricked.

    `successful` has columns model, dataset, direction, id, k; `candidates` maps dataset → direct candidates.
    """
    grouped = successful.group_by("dataset", "direction", "id", "k", maintain_order=True).agg(pl.col("model").unique(maintain_order=True))
    parts = []
    for (dataset, direction), group in grouped.group_by("dataset", "direction", maintain_order=True):
        table = candidates[dataset]
        tgt = direction.split("-")[1]
        distractors = table.filter((pl.col("lang") == tgt) & (pl.col("slot") > 0)).select("id", pl.col("slot").alias("k"), pl.col("text").alias("distractor"))
        parts.append(group.join(texts_of(table, direction), on="id").join(distractors, on=["id", "k"]))
    if not parts:
        return pl.DataFrame(schema={"dataset": pl.String, "direction": pl.String, "id": pl.Int64, "k": pl.Int64,
                                    "model": pl.List(pl.String), "source": pl.String, "target": pl.String, "distractor": pl.String})
    return pl.concat(parts)


#: Table 5's `Checked` for a distractor neither the judge nor an annotator checked.
UNCHECKED = "no"
#: Under Table 5: what its `Checked` column says.
CHECKED_NOTE = ("Checked: whether someone confirmed that the distractor changes the meaning of its target — `judge: "
                "different` (the LLM judge, validation.judge), `people: different 2/2` (annotators' verdicts, "
                "annotation.files) — or `no`: nobody checked it, so it may be a paraphrase rather than a model's failure "
                "(the rules reject only what certainly keeps the meaning).")


def checked_by(sets: dict[tuple[str, str], pl.DataFrame]) -> pl.DataFrame:
    """Who checked each distractor of the scored sets ({(dataset, lang): set}): dataset, lang, k, id and `checked`
    (the annotators' verdicts when people judged it, else the judge's answer, else UNCHECKED)."""
    schema = {"dataset": pl.String, "lang": pl.String, "id": pl.Int64, "k": pl.Int64, "checked": pl.String}
    frames = []
    for (dataset, lang), table in sets.items():
        judge = pl.col("judge") if "judge" in table.columns else pl.lit(None, dtype=pl.String)
        people = pl.col("people") if "people" in table.columns else pl.lit(None, dtype=pl.String)
        frames.append(table.select(
            pl.lit(dataset).alias("dataset"), pl.lit(lang).alias("lang"), "id", "k",
            pl.when(people.is_not_null()).then(pl.format("people: {}", people))
            .when(judge.is_not_null()).then(pl.format("judge: {}", judge))
            .otherwise(pl.lit(UNCHECKED)).alias("checked")))
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def table5(tricked_rows: pl.DataFrame, n: int, seed: int, checked: pl.DataFrame | None = None) -> pl.DataFrame:
    """A seeded random sample of `n` successful distractors, paste-ready, with who checked each (`checked_by`)."""
    sample = tricked_rows.sample(min(n, tricked_rows.height), seed=seed, shuffle=True) if tricked_rows.height else tricked_rows
    sample = sample.with_columns(pl.col("direction").str.split("-").list.get(1).alias("lang"))
    if checked is not None:
        sample = sample.join(checked, on=["dataset", "lang", "id", "k"], how="left", maintain_order="left")
    else:
        sample = sample.with_columns(pl.lit(None, dtype=pl.String).alias("checked"))
    return sample.select(
        pl.col("dataset").alias("Dataset"),
        pl.col("direction").map_elements(direction_label, return_dtype=pl.String).alias("Direction"),
        pl.col("source").alias("Source"),
        pl.col("target").alias("True target"),
        pl.col("distractor").alias("Successful distractor"),
        pl.col("model").list.join(", ").alias("Tricked models"),
        pl.col("checked").fill_null(UNCHECKED).alias("Checked"),
    )


def direct_success_pivot_failure(direct: pl.DataFrame, pivot: pl.DataFrame) -> pl.DataFrame:
    """(id, direction) items that are correct in the direct view and wrong through the pivot."""
    joined = direct.select("id", "direction", pl.col("correct").alias("direct")).join(
        pivot.select("id", "direction", pl.col("correct").alias("pivot")), on=["id", "direction"]
    )
    return joined.filter(pl.col("direct") & ~pl.col("pivot")).select("id", "direction")
