"""The language registry: everything clsd knows about a language, read from resources/languages.yaml.

Languages are data, not code: a new language is one entry in that file (checked against
workflow/schemas/languages.schema.yaml). The file is the workflow's (clsd.core.workflow: the checkout Snakemake
runs, not necessarily the one clsd is installed from), and every error about it names the file read. A language a
config names but the registry lacks fails at start-up; a capability a language lacks (detector, word list, Hunspell
dictionary, tagger, rule lexicon) is None here and each stage says so where its output would be.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clsd.core.errors import InputError
from clsd.core.workflow import project_file, read_checked_yaml

#: Data files this module reads: part of the code identity of every rule that uses it (clsd.core.code), so editing a
#: language's entry reruns what it changes.
DATA_FILES = ("resources/languages.yaml", "workflow/schemas/languages.schema.yaml")


def registry_file() -> Path:
    """The registry read: the workflow's resources/languages.yaml."""
    return project_file(DATA_FILES[0])


@dataclass(frozen=True)
class Validation:
    """The distractor validator's word lists of one language (the registry entry's `validation` mapping; empty
    when it has none: the validator then proves fewer reorders harmless and keeps them as suspects)."""

    case_sensitive: frozenset[str] = frozenset()
    adverbial_heads: frozenset[str] = frozenset()
    time_words: frozenset[str] = frozenset()
    clause_words: frozenset[str] = frozenset()
    noun_phrase_starts: frozenset[str] = frozenset()
    reporting: frozenset[str] = frozenset()
    verb_second: bool = False
    second_chance_zipf: float | None = None
    foreign_lexicon: bool = False
    optional_marks: bool = False
    name_list: bool = False
    prefixes: frozenset[str] = frozenset()
    #: Suffix → the endings of the word it derives from, longest suffix first.
    suffixes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    inflections: frozenset[str] = frozenset()
    loan_endings: frozenset[str] = frozenset()
    loan_prefixes: frozenset[str] = frozenset()
    combining_forms: int = 0
    #: Name-derivative suffix → the endings of the name it replaces, longest suffix first.
    name_suffixes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The language's spelling of a foreign stem's ending → the foreign one (German el: English le).
    loan_respellings: tuple[tuple[str, str], ...] = ()

    @classmethod
    def read(cls, entry: dict) -> "Validation":
        """From a registry entry's `validation` mapping (word lists become sets, suffixes pairs, longest first)."""
        fields = {key: frozenset(value) if isinstance(value, list) else value for key, value in entry.items()}
        for key in ("suffixes", "name_suffixes"):
            if key in fields:
                fields[key] = tuple(sorted(((suffix, tuple(bases)) for suffix, bases in fields[key].items()),
                                           key=lambda pair: -len(pair[0])))
        if "loan_respellings" in fields:
            fields["loan_respellings"] = tuple(fields["loan_respellings"].items())
        return cls(**fields)


@dataclass(frozen=True)
class Names:
    """How a language's CLSD annotators tell names among the nouns a tagger calls common (the registry entry's
    `tagger.names`; empty: no such convention): nationality nouns derived from place names, institutions named by a
    polity and a body, compounds whose first part is a name (clsd.analysis.names)."""

    demonym_suffixes: tuple[str, ...] = ()
    place_endings: tuple[str, ...] = ()
    language_endings: tuple[str, ...] = ()
    inflections: tuple[str, ...] = ()
    polities: frozenset[str] = frozenset()
    bodies: frozenset[str] = frozenset()
    party_endings: tuple[str, ...] = ()

    @classmethod
    def read(cls, entry: dict) -> "Names":
        """From a registry entry's `tagger.names` mapping (polities and bodies become sets, the rest tuples)."""
        return cls(**{key: frozenset(value) if key in ("polities", "bodies") else tuple(value)
                      for key, value in entry.items()})


@dataclass(frozen=True)
class Language:
    """One registry entry (see the comments at the top of resources/languages.yaml)."""

    iso: str
    name: str
    code: str
    lingua: str | None
    wordfreq: str | None
    hunspell: str | None
    segmentation: str
    final: str
    cased: bool
    elisions: frozenset[str] = frozenset()
    compound_links: tuple[str, ...] = ()
    coordinators: frozenset[str] = frozenset()
    stanza: str | None = None
    stanza_mwt: bool = False
    offline_tagger: str | None = None
    propn_words: frozenset[str] = frozenset()
    names: Names = Names()
    adjectives_after_nouns: bool = False
    rules: str | None = None
    published: str | None = None
    validation: Validation = Validation()


def registry() -> dict[str, Language]:
    """Every language of the workflow's registry by ISO 639-1 code."""
    return read_registry(registry_file())


@lru_cache(maxsize=4)
def read_registry(path: Path) -> dict[str, Language]:
    """Every language of the registry file `path` (validated against its schema once per process)."""
    data = read_checked_yaml(path, DATA_FILES[1], "the language registry")
    return {
        iso: Language(
            iso=iso, name=entry["name"], code=entry["code"], lingua=entry["lingua"], wordfreq=entry["wordfreq"],
            hunspell=entry["hunspell"], segmentation=entry["segmentation"], final=entry["final"], cased=entry["cased"],
            elisions=frozenset(entry.get("elisions", [])), compound_links=tuple(entry.get("compound_links", [])),
            coordinators=frozenset(entry.get("coordinators", [])), stanza=entry["tagger"].get("stanza"),
            stanza_mwt=entry["tagger"].get("mwt", False),
            offline_tagger=entry["tagger"].get("offline"), propn_words=frozenset(entry["tagger"].get("propn", [])),
            names=Names.read(entry["tagger"].get("names", {})),
            adjectives_after_nouns=entry["tagger"].get("adjectives_after_nouns", False), rules=entry.get("rules"), published=entry.get("published"),
            validation=Validation.read(entry.get("validation", {})),
        )
        for iso, entry in data.items()
    }


def language(iso: str, where: str = "language") -> Language:
    """The registry entry of `iso`; InputError naming `where` (e.g. a config key) when it is not registered."""
    known = registry()
    if iso not in known:
        raise InputError(f"{where}: unknown language {iso!r}; clsd knows {', '.join(sorted(known))} "
                         f"(read from {registry_file()}: add it there)")
    return known[iso]


def name(iso: str) -> str:
    """English name of a registered language (its code when unregistered, for labels only)."""
    entry = registry().get(iso)
    return entry.name if entry else iso


def names() -> dict[str, str]:
    """English names of every registered language by code (for tables)."""
    return {iso: entry.name for iso, entry in registry().items()}
