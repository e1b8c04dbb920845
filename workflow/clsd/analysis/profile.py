"""The closeness profile of a distractor set, and how far it is from a reference (by default GPT-4's published sets).

A set's profile, per target language: the percentage of its distractors in each Levenshtein-ratio bin to their
true target (Table 3's measure) and the median ratio, in the bins of clsd.core.levenshtein: Table 3's, widened so
that every distractor falls in one: below 0.6 (Table 3's lowest bin starts at 0.3), [0.6,0.7), [0.7,0.8), [0.8,0.9)
and 0.9 up to a copy (1). Two sets whose profiles differ test different things: near-copies test single-word
swaps, far sentences test little; GPT-4's distractors are mostly phrase-level rewrites in [0.7,0.9).

Its distance to the reference: the largest gap of a bin's share, in percentage points, and the gap of the median.
A profile *matches* within 10 points in every bin and 0.05 of the median (the targets of a generator, docs/generator-check.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import polars as pl

from clsd.core.levenshtein import EDGES, bin_of, similarity
from clsd.core.workflow import data_file, read_checked_yaml

#: The labels of the bins (clsd.core.levenshtein.EDGES) in tables.
LABELS = ("<0.6", "[0.6,0.7)", "[0.7,0.8)", "[0.8,0.9)", "≥0.9")
#: A profile matches its reference when every bin is within this many points and the median within MEDIAN_GAP.
BIN_GAP, MEDIAN_GAP = 10.0, 0.05


@dataclass(frozen=True)
class Profile:
    """Percent of distractors per bin (EDGES), the median ratio, and how many distractors (None: a reference's)."""

    shares: tuple[float, ...]
    median: float
    n: int | None = None


def profile(ratios: Sequence[float]) -> Profile:
    """The profile of these ratios (an empty list has no profile: a ValueError)."""
    if not ratios:
        raise ValueError("a closeness profile needs at least one distractor")
    counts = [0] * len(EDGES)
    for ratio in ratios:
        counts[bin_of(ratio)] += 1
    return Profile(tuple(100.0 * c / len(ratios) for c in counts), median(ratios), len(ratios))


def ratios_by_language(candidates: pl.DataFrame) -> dict[str, list[float]]:
    """Each distractor's ratio to its item's true target (slot 0), by language, from a candidates table (id, lang,
    slot, text; items keyed by dataset too when a `dataset` column pools several)."""
    keys = ["dataset", "id", "lang"] if "dataset" in candidates.columns else ["id", "lang"]
    targets = candidates.filter(pl.col("slot") == 0).select(*keys, pl.col("text").alias("target"))
    joined = candidates.filter(pl.col("slot") > 0).join(targets, on=keys)
    ratios: dict[str, list[float]] = {}
    for lang, target, text in zip(joined["lang"], joined["target"], joined["text"]):
        ratios.setdefault(lang, []).append(similarity(target, text))
    return ratios


def profiles(candidates: pl.DataFrame) -> dict[str, Profile]:
    """The profile of every language of a candidates table."""
    return {lang: profile(ratios) for lang, ratios in ratios_by_language(candidates).items()}


def gaps(mine: Profile, reference: Profile) -> tuple[float, float]:
    """The largest gap of a bin's share (points) and the gap of the median (mine minus the reference's)."""
    return max(abs(a - b) for a, b in zip(mine.shares, reference.shares)), mine.median - reference.median


def matches(mine: Profile, reference: Profile) -> bool:
    """Whether every bin is within BIN_GAP points of the reference and the median within MEDIAN_GAP."""
    bin_gap, median_gap = gaps(mine, reference)
    return bin_gap <= BIN_GAP and abs(median_gap) <= MEDIAN_GAP


@dataclass(frozen=True)
class Reference:
    """A reference profile per language, with the label tables give it."""

    label: str
    languages: Mapping[str, Profile]


def read_reference(path: str | Path) -> Reference:
    """A reference profile file (resources/profiles/*.yaml, checked against workflow/schemas/profile.schema.yaml)."""
    data = read_checked_yaml(Path(path), "workflow/schemas/profile.schema.yaml", "reference closeness profile")
    return Reference(data["label"], {lang: Profile(tuple(entry["shares"]), entry["median"])
                                     for lang, entry in data["languages"].items()})


def reference_of(param: Mapping[str, str], sets: Mapping[str, pl.DataFrame], labels: Mapping[str, str]) -> Reference | None:
    """The reference a rule's param names (clsd.analysis.jobs.profile_reference): a file, read; a dataset, profiled from
    its table among `sets` (None when it is not among them)."""
    if "dataset" not in param:
        return read_reference(data_file(param["file"]))
    name = param["dataset"]
    return Reference(labels.get(name, name), profiles(sets[name])) if name in sets else None


def shares_for(reference: Reference, lang: str) -> tuple[float, ...]:
    """The reference's shares per bin for `lang`; for a language it has no profile of, the mean of its languages'
    (GPT-4's German and French profiles differ by a few points: a new language aims at their middle)."""
    if lang in reference.languages:
        return reference.languages[lang].shares
    profiles_ = list(reference.languages.values())
    return tuple(sum(p.shares[i] for p in profiles_) / len(profiles_) for i in range(len(EDGES)))


def record(mine: Profile, reference: Profile | None) -> dict[str, object]:
    """A profile as a flat record (the generation report, the bench), with its gaps to the reference when there is one."""
    row: dict[str, object] = {"n": mine.n, **{label: round(share, 1) for label, share in zip(LABELS, mine.shares)},
                              "median": round(mine.median, 3)}
    if reference is not None:
        bin_gap, median_gap = gaps(mine, reference)
        row |= {"max_bin_gap": round(bin_gap, 1), "median_gap": round(median_gap, 3), "matches": matches(mine, reference)}
    return row


def kept_record(items: Sequence[tuple[object, str]], kept: pl.DataFrame, lang: str, reference: Reference | None) -> dict[str, object] | None:
    """The generation report's profile of the distractors kept for (id, target) `items` (a table with id and text),
    beside the reference's for `lang` when it has one; None when nothing was kept."""
    targets = dict(items)
    ratios = [similarity(targets[item], text) for item, text in zip(kept["id"].to_list(), kept["text"].to_list())]
    if not ratios:
        return None
    ref = reference.languages.get(lang) if reference else None
    return record(profile(ratios), ref) | ({"reference": reference.label} if ref else {})


#: Columns of the profile table: one row per set and language, the reference's rows beside them.
TABLE_SCHEMA = {"Set": pl.String, "Language": pl.String, "n": pl.Int64, **{label: pl.Float64 for label in LABELS},
                "median": pl.Float64, "max bin gap": pl.Float64, "median gap": pl.Float64, "matches": pl.String}


def profile_table(sets: Mapping[str, Mapping[str, Profile]], reference: Reference, language_names: Mapping[str, str]) -> pl.DataFrame:
    """Per language: the reference's row, then each set's row with its gaps to the reference (`matches`: yes/no;
    `–` where the reference has no profile for that language)."""
    rows = []
    languages: Iterable[str] = dict.fromkeys(lang for by_lang in sets.values() for lang in by_lang)
    for lang in languages:
        ref = reference.languages.get(lang)
        name = language_names.get(lang, lang)
        if ref is not None:
            rows.append({"Set": reference.label, "Language": name, "n": None, **dict(zip(LABELS, ref.shares)),
                         "median": ref.median, "max bin gap": None, "median gap": None, "matches": None})
        for label, by_lang in sets.items():
            if lang not in by_lang or label == reference.label:  # a dataset named as the reference: its row above
                continue
            mine = by_lang[lang]
            bin_gap, median_gap = gaps(mine, ref) if ref is not None else (None, None)
            rows.append({"Set": label, "Language": name, "n": mine.n, **dict(zip(LABELS, mine.shares)), "median": mine.median,
                         "max bin gap": bin_gap, "median gap": median_gap,
                         "matches": "–" if ref is None else ("yes" if matches(mine, ref) else "no")})
    return pl.DataFrame(rows, schema=TABLE_SCHEMA, orient="row")
