"""The language of a text (lingua over the languages of the registry, and the scripts of its letters): one
detector for every stage.

Used by the LLM answer parser and the validator (a distractor in another language is rejected: `other_language`)
and the input checks (a column of a corpus or published file must be in its language: `detect`). A language the
registry gives no lingua name cannot be detected: callers skip its check and say so.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Iterable

from clsd.core.languages import registry

#: lingua's confidence (full mode, the two candidate languages only) that a distractor is in the other language
#: before it counts as another language: a short sentence lingua hesitates over ("This is a bolder plan.": Danish
#: 0.50) is never rejected; whole sentences in another language score above 0.95.
MIN_CONFIDENCE = 0.9
#: ISO 15924 script (the suffix of the registry's `code`) → the first words of the Unicode names of its letters.
SCRIPTS = {"Latn": {"LATIN"}, "Grek": {"GREEK"}, "Cyrl": {"CYRILLIC"}, "Arab": {"ARABIC"}, "Hebr": {"HEBREW"},
           "Deva": {"DEVANAGARI"}, "Beng": {"BENGALI"}, "Hang": {"HANGUL"}, "Thai": {"THAI"}, "Hans": {"CJK"},
           "Jpan": {"CJK", "HIRAGANA", "KATAKANA"}}
KNOWN_SCRIPTS = set().union(*SCRIPTS.values())


def detectable(lang: str) -> bool:
    """Whether the detector knows `lang` (the registry names a lingua language for it)."""
    entry = registry().get(lang)
    return entry is not None and entry.lingua is not None


@lru_cache(maxsize=1)
def lingua_names() -> list[str]:
    """The languages lingua detects, by the names the registry's `lingua` takes (GERMAN, XHOSA)."""
    from lingua import Language

    return sorted(language.name for language in Language.all())


@lru_cache(maxsize=32)
def _detector(languages: frozenset[str], low_accuracy: bool):  # -> lingua.LanguageDetector
    from lingua import Language, LanguageDetectorBuilder

    known = registry()
    builder = LanguageDetectorBuilder.from_languages(*(getattr(Language, known[iso].lingua) for iso in sorted(languages)))
    return (builder.with_low_accuracy_mode() if low_accuracy else builder).build()


@lru_cache(maxsize=1)
def _by_lingua_name() -> dict[str, str]:
    return {entry.lingua: iso for iso, entry in registry().items() if entry.lingua}


def detect(text: str, among: Iterable[str] | None = None, *, low_accuracy: bool = False) -> str | None:
    """ISO 639-1 code of the language of `text` among the registry languages `among` (default: all detectable
    ones), None when undecided. `low_accuracy` uses lingua's trigram-only mode: ten times faster and leaner
    (64 MB instead of 670 MB for all registry languages), good enough for whole sentences."""
    languages = frozenset(iso for iso in (among if among is not None else registry()) if detectable(iso))
    if len(languages) < 2:
        raise ValueError(f"language detection needs at least two detectable languages, got {sorted(languages)}")
    found = _detector(languages, low_accuracy).detect_language_of(text)
    return None if found is None else _by_lingua_name()[found.name]


def _confidence(text: str, lang: str, other: str) -> float:
    """lingua's confidence (full mode, `lang` and `other` only) that `text` is in `lang` rather than `other`."""
    from lingua import Language

    detector = _detector(frozenset((lang, other)), False)
    return detector.compute_language_confidence(text, getattr(Language, registry()[lang].lingua))


def scripts(text: str) -> list[str]:
    """The scripts of the letters of `text` in order of first use, each as the first word of its letters' Unicode
    names (LATIN, GREEK, CJK ...)."""
    found = (unicodedata.name(char, "").split(" ")[0] for char in text if char.isalpha())
    return list(dict.fromkeys(script for script in found if script))


def other_language(target: str, distractor: str, lang: str) -> str | None:
    """The language the distractor is written in when it is not `lang` (ISO 639-1), or the name of a script
    `lang` does not use and the target does not use either (a Greek word in a German sentence: "greek"); None
    when it is `lang` or undecided. lingua's fast mode over every registry language proposes a language;
    lingua's full mode on just `lang` and that language must confirm it with MIN_CONFIDENCE. A language the
    target is in too (a French name quoted in a German sentence) is not another language."""
    entry = registry().get(lang)
    if entry is None:
        return None
    own = SCRIPTS.get(entry.code.split("-")[-1])
    if own is not None:
        allowed = own | set(scripts(target))
        foreign = [script for script in scripts(distractor) if script in KNOWN_SCRIPTS and script not in allowed]
        if foreign:
            return foreign[0].lower()
    if not detectable(lang):
        return None
    proposed = detect(distractor, low_accuracy=True)
    if proposed is None or proposed == lang or not detectable(proposed):
        return None
    if _confidence(distractor, proposed, lang) < MIN_CONFIDENCE or _confidence(target, proposed, lang) >= 0.5:
        return None
    return proposed
