"""Language identification (lingua) over the languages of the registry: one detector for every stage.

Used by the LLM answer parser (a distractor in another language is rejected), the validator and the input
checks (a column of a corpus or published file must be in its language). A language the registry gives no
lingua name cannot be detected: callers skip its check and say so.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from clsd.core.languages import registry


def detectable(lang: str) -> bool:
    """Whether the detector knows `lang` (the registry names a lingua language for it)."""
    entry = registry().get(lang)
    return entry is not None and entry.lingua is not None


@lru_cache(maxsize=8)
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
