"""More candidates than four per answer (`generation.candidates`): the four an item keeps are those closest to the
reference closeness profile, the same on a replay; four candidates keep the answer order, as before (a real HTTP
server on 127.0.0.1 answering the JSON schema's number of strings)."""

from __future__ import annotations

import json
from dataclasses import replace

from clsd.analysis import profile
from clsd.analysis.table3 import similarity
from clsd.serving.client import ChatClient
from clsd.generate import llm
from clsd.generate.choose import closest_to_profile, shortened
from clsd.generate.settings import Settings, generation_settings, request_settings
from clsd.generate.store import ResponseStore, request_key
from clsd.validate.verdicts import UNKNOWN_SUSPECT, Verdict
from conftest import ROOT
from fault_server import FaultServer, candidates_for, job_config

TEMPLATE = (ROOT / "resources/prompts/paper-v1.txt").read_text()
GPT4 = profile.read_reference(ROOT / "resources/profiles/gpt-4-0613-wmt.yaml")
TARGET = "Der Stadtrat hat am Dienstag den Bau von drei neuen Grundschulen in der Altstadt genehmigt."
NEAR = ["Der Stadtrat hat am Mittwoch den Bau von drei neuen Grundschulen in der Altstadt genehmigt.",
        "Der Stadtrat hat am Dienstag den Bau von vier neuen Grundschulen in der Altstadt genehmigt.",
        "Der Stadtrat hat am Dienstag den Bau von drei neuen Grundschulen in der Altstadt abgelehnt."]
PHRASE = "Der Stadtrat hat am Dienstag den Abriss von drei alten Sporthallen in der Altstadt genehmigt."
FAR = "Der Bürgermeister hat den Verkauf des alten Rathauses an einen Investor aus Berlin verschoben."


def bins(target: str, texts: list[str]) -> list[int]:
    return [profile.bin_of(similarity(target, text)) for text in texts]


def test_the_four_kept_are_those_closest_to_the_reference_profile():
    shares = GPT4.languages["de"].shares
    assert bins(TARGET, NEAR) == [4, 4, 4] and bins(TARGET, [PHRASE, FAR]) == [3, 0]
    # five valid candidates for four places: the item's expected counts under GPT-4's German are 0.24, 0.78, 1.22,
    # 1.1 and 0.66 per bin, so the phrase rewrite and the far sentence come in and only two near-copies stay
    assert closest_to_profile(TARGET, [], [*NEAR, PHRASE, FAR], 4, shares) == [0, 1, 3, 4]
    # a reference of near-copies only keeps the near-copies
    assert closest_to_profile(TARGET, [], [*NEAR, PHRASE, FAR], 3, (0, 0, 0, 0, 100)) == [0, 1, 2]
    # with two near-copies kept already, one place left: the phrase rewrite, wherever it stands in the answer
    assert closest_to_profile(TARGET, NEAR[:2], [FAR, NEAR[2], PHRASE], 1, shares) == [2]
    # a reference of far sentences only takes the far one
    assert closest_to_profile(TARGET, NEAR[:2], [NEAR[2], PHRASE, FAR], 1, (100, 0, 0, 0, 0)) == [2]
    # equals go to answer order; fewer candidates than places: all of them
    assert closest_to_profile(TARGET, [], NEAR, 2, shares) == [0, 1]
    assert closest_to_profile(TARGET, [], [FAR, PHRASE], 3, shares) == [0, 1]


def test_a_language_without_a_reference_profile_aims_at_the_mean_of_its_languages():
    assert profile.shares_for(GPT4, "de") == GPT4.languages["de"].shares
    mean = profile.shares_for(GPT4, "ja")
    assert mean == tuple((a + b) / 2 for a, b in zip(GPT4.languages["de"].shares, GPT4.languages["fr"].shares))
    assert abs(sum(mean) - 100) < 1e-6


def generator(server: FaultServer, store: ResponseStore, candidates: int) -> llm.Generator:
    settings = Settings(model="fault", template=TEMPLATE, endpoint="fault", concurrency=2, answer_format="json",
                        candidates=candidates)
    return llm.Generator(settings, store, lambda: ChatClient(base_url=server.base_url, api_key="k", timeout=5, retries=0,
                                                             requests_per_minute=None),
                         reference_shares=GPT4.languages["de"].shares)


def test_six_candidates_are_asked_for_and_the_item_keeps_the_four_closest_to_the_profile(tmp_path):
    items = [(i, f"Der Stadtrat {letter} hat am Dienstag den Bau von drei neuen Grundschulen genehmigt.")
             for i, letter in enumerate("AB")]
    store = ResponseStore(tmp_path / "store.sqlite")
    with FaultServer() as server:
        table, report = llm.generate(items, "de", generator(server, store, 6), {}, "llm:fault")
        schema = server.seen[0].body["response_format"]["json_schema"]["schema"]["properties"]["sentences"]
        assert schema["minItems"] == schema["maxItems"] == 6 and len(server.seen) == 2
    for item, sentence in items:
        written = candidates_for(sentence, "German", 6)
        assert bins(sentence, written) == [4, 4, 4, 4, 3, 1]  # four near-copies, then two rewrites of the end
        kept = table.filter(table["id"] == item)["text"].to_list()
        assert kept == [written[i] for i in closest_to_profile(sentence, [], written, 4, GPT4.languages["de"].shares)]
        assert kept == [written[0], written[1], written[4], written[5]]  # not the first four in answer order
    assert report["generated_at_first_ask"] == 2 and report["sentences"]["written"] == 12
    # the replay keeps the same four, asking nothing
    with FaultServer() as server:
        again, replay = llm.generate(items, "de", generator(server, ResponseStore(tmp_path / "store.sqlite"), 6), {}, "llm:fault")
        assert server.seen == [] and again.equals(table) and replay["cache_hits"] == 2
    # four candidates: the answer's four, in its order, under another request key
    with FaultServer() as server:
        four, _ = llm.generate(items, "de", generator(server, ResponseStore(tmp_path / "store.sqlite"), 4), {}, "llm:fault")
        assert len(server.seen) == 2
        assert four.filter(four["id"] == 0)["text"].to_list() == candidates_for(items[0][1], "German", 4)


class MarksSuspects:
    """A validator that keeps every sentence and notes those holding `marked` as non_word_suspect (an invented place,
    a stray capitalised word: what the real rules note when nothing attests a capitalised word)."""

    def __init__(self, marked: set[str]) -> None:
        self.marked = marked

    def check_item(self, target: str, distractors: list[str], mend: bool = False) -> list[Verdict]:
        return [Verdict(note=UNKNOWN_SUSPECT) if text in self.marked else Verdict() for text in distractors]


def test_a_sentence_with_unattested_words_is_kept_only_where_too_few_others_are_valid(tmp_path):
    items = [(0, "Der Stadtrat A hat am Dienstag den Bau von drei neuen Grundschulen genehmigt.")]
    written = candidates_for(items[0][1], "German", 6)
    for marked, expected in (
            # two of six noted: the four others are kept, though two of the noted are closer to the profile
            ({written[4], written[5]}, written[:4]),
            # three noted: the three others, then the noted one closest to the profile with them
            ({written[0], written[4], written[5]}, [*written[1:4], written[4]])):
        for wait in (False, True):  # waiting, the last of three attempts (the same answer again) comes to the same
            with FaultServer() as server:
                gen = generator(server, ResponseStore(tmp_path / f"{len(marked)}-{wait}.sqlite"), 6)
                gen.settings = replace(gen.settings, fallbacks_wait=wait)
                gen.validator = MarksSuspects(marked)
                table, report = llm.generate(items, "de", gen, {}, "llm:fault")
            assert table["text"].to_list() == expected
            assert report["sentences"]["unused"] == 2
            assert report["attempts"] == (3 if wait and len(marked) == 3 else 1)
            assert table["source"].n_unique() == 1  # all four from the first answer: its key, not the last attempt's


def test_with_fallbacks_wait_an_item_is_asked_again_before_a_fallback_is_kept(tmp_path):
    """The first answer holds one valid sentence and five with unattested words; asked again, six other valid ones.
    At once, three of the five come in beside the valid one and nothing is asked again; waiting, the re-ask fills
    the three places and the five are left unused."""
    items = [(0, "Der Stadtrat A hat am Dienstag den Bau von drei neuen Grundschulen genehmigt.")]
    written = candidates_for(items[0][1], "German", 6)
    kept, reports = {}, {}
    for wait in (False, True):
        with FaultServer() as server:
            server.plans = {"Stadtrat A": ["ok", "again"]}
            gen = generator(server, ResponseStore(tmp_path / f"{wait}.sqlite"), 6)
            gen.settings = replace(gen.settings, fallbacks_wait=wait)
            gen.validator = MarksSuspects(set(written[:5]))
            table, reports[wait] = llm.generate(items, "de", gen, {}, "llm:fault")
        kept[wait] = table["text"].to_list()
    assert kept[False][0] == written[5] and set(kept[False][1:]) < set(written[:5])
    assert reports[False]["attempts"] == 1 and reports[False]["sentences"]["unused"] == 2
    assert kept[True][0] == written[5] and all(text.startswith("Auch ") for text in kept[True][1:])
    assert reports[True]["attempts"] == 2 and reports[True]["sentences"]["unused"] == 5 + 3


def test_a_shortened_sentence_is_kept_only_where_too_few_others_are_valid():
    """GPT-4's distractors keep at least 0.7 times their target's words (99.4% of the published slices'); a
    summary of the target is a far sentence of another kind."""
    assert not shortened(TARGET, PHRASE, "de") and not shortened(TARGET, FAR, "de")  # 13 words of 14, 14 of 14
    summary = "Der Stadtrat hat drei Grundschulen genehmigt."
    assert shortened(TARGET, summary, "de") and not shortened(summary, TARGET, "de")
    # in a script without spaces the words are ICU's
    assert shortened("市議会は火曜日に旧市街に新しい小学校を三校建設することを承認した。", "市議会は承認した。", "ja")


def test_the_number_of_candidates_is_part_of_the_request_key_and_the_params(tmp_path):
    generation = job_config(tmp_path / "s.sqlite", "http://127.0.0.1:9/v1")["generation"]
    assert generation["candidates"] == 4  # the schema's default
    four, six = (generation_settings(generation | {"candidates": n}, TEMPLATE, "e") for n in (4, 6))
    messages = [{"role": "user", "content": "x"}]
    assert request_key("e", "m", messages, four.sampling(), 0) != request_key("e", "m", messages, six.sampling(), 0)
    assert request_settings(generation) != request_settings(generation | {"candidates": 6})
    # a numbered answer format sends no schema, yet the four kept depend on the candidates: the params differ
    numbered = generation | {"answer_format": "numbered"}
    assert request_settings(numbered)["candidates"] == 4 and request_settings(numbered | {"candidates": 6})["candidates"] == 6
    assert json.dumps(six.sampling()["response_format"]).count('"maxItems": 6') == 1
