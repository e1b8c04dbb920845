"""The characters a sentence of a JSON answer may hold (generation.constrain_script), as a JSON-schema `pattern`.

A small model pushed off its target's words by DRY sometimes leaves the language's script (*Sahра*, *Aufschwинг*,
*или* in German sentences) or fills a place of the schema with the prompt's words (*sentences_with_edit1234*). The
validator rejects both as `wrong_language`, after they were paid for. With answer_format json the server decodes to
the schema, so a `pattern` on each sentence keeps them from being written at all: the letters of the target's script
(the registry's code, *deu-Latn*: Latin), printable ASCII (news in any script writes *NATO* and *iPhone*), the
punctuation and signs every language writes with (Unicode's Common script in Latin-1, General Punctuation, currency
signs, CJK punctuation), combining accents, and every character of the target itself (a name it writes in another
script can be kept). Never a straight double quote or a backslash (they would need escaping inside a JSON string), a
control character, or an underscore the target lacks.

llama.cpp turns an anchored pattern into a grammar (its json-schema-to-grammar takes `\\uXXXX` ranges in a character
class); OpenAI's structured outputs take `pattern` too.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

from clsd.core.languages import language

#: Printable ASCII, letters included: news in any script writes names, acronyms and brands in Latin letters (NATO).
ASCII = (0x20, 0x7E)
#: Blocks whose Common-script characters any language may write: Latin-1's punctuation and signs, General Punctuation
#: (curly quotes, dashes), super- and subscripts, currency signs, CJK punctuation and full-width forms.
COMMON_BLOCKS = ((0xA0, 0xBF), (0x2000, 0x20CF), (0x3000, 0x303F), (0xFF00, 0xFFEF))
#: ISO 15924 codes that name a writing system of several Unicode scripts (the registry writes Japanese *jpn-Jpan*).
COMPOSITE_SCRIPTS = {"Jpan": ("Hira", "Kana", "Hani"), "Hans": ("Hani",), "Hant": ("Hani",), "Kore": ("Hang", "Hani")}
#: Combining accents (Unicode's Inherited script in the Combining Diacritical Marks block).
COMBINING = (0x300, 0x36F)
#: Left out: the first two need escaping inside a JSON string; the underscore is what the prompt's junk is made of
#: (allowed where the target writes one).
EXCLUDED = frozenset('"\\_')
#: Highest code point a script's letters are looked for at (the Basic Multilingual Plane).
BMP_END = 0xFFFF


def script_of(lang: str) -> str:
    """The ISO 15924 script of a registered language (its code's subtag: *fra-Latn* → Latn)."""
    return language(lang).code.rsplit("-", 1)[-1]


def _points(pattern: str, start: int, end: int) -> set[int]:
    """Code points from `start` to `end` that one character of `pattern` matches."""
    return {ord(char) for char in regex.findall(pattern, "".join(map(chr, range(start, end + 1))))}


@lru_cache(maxsize=None)
def _script_points(script: str) -> frozenset[int]:
    """Code points of the Basic Multilingual Plane whose script extensions include `script`'s (Unicode's data)."""
    return frozenset(point for part in COMPOSITE_SCRIPTS.get(script, (script,))
                     for point in _points(rf"\p{{Script_Extensions={part}}}", 0x20, BMP_END))


@lru_cache(maxsize=None)
def _common_points() -> frozenset[int]:
    """Printable ASCII, the Common-script characters of COMMON_BLOCKS, and the combining accents."""
    common = {point for start, end in COMMON_BLOCKS for point in _points(r"\p{Script=Common}", start, end)}
    return frozenset(common | set(range(ASCII[0], ASCII[1] + 1)) | set(range(COMBINING[0], COMBINING[1] + 1)))


def allowed_points(target: str, lang: str) -> set[int]:
    """Every code point a sentence of `target`'s language may hold (module docstring)."""
    excluded = EXCLUDED - {"_"} if "_" in target else EXCLUDED  # the target's own underscore is allowed
    points = set(_script_points(script_of(lang))) | _common_points() | {ord(char) for char in target}
    return {point for point in points if chr(point) not in excluded and unicodedata.category(chr(point)) != "Cc"}


def _escape(point: int) -> str:
    return f"\\u{point:04X}" if point <= 0xFFFF else f"\\U{point:08X}"


@lru_cache(maxsize=4096)
def sentence_pattern(target: str, lang: str) -> str:
    """An anchored pattern of one or more characters allowed in a sentence written for `target` in `lang`, as
    ranges of `\\uXXXX` escapes in one character class."""
    points = sorted(allowed_points(target, lang))
    ranges: list[tuple[int, int]] = []
    for point in points:
        if ranges and point == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    body = "".join(_escape(start) if start == end else f"{_escape(start)}-{_escape(end)}" for start, end in ranges)
    return f"^[{body}]+$"
