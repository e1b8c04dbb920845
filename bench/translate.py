"""Benchmark: sentences/s of transformers fp32 vs CTranslate2 int8 on the same model and decoding settings.

No translation weights ship offline, so by default the model is the tiny random M2M100 of the tests
(tests/tiny_m2m.py); pass --model with a local M2M100 folder (e.g. facebook/m2m100_418M) for real figures.
200 German WMT19 sentences, greedy decoding, max 64 new tokens. Prints and writes bench/results/translate.json.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from clsd.translate import pivot

from _common import log_to_stdout, write_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
log = logging.getLogger("bench.translate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="local M2M100 folder (default: build the tiny test model)")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/translate.json")
    args = parser.parse_args()
    log_to_stdout()
    texts = (ROOT.parent / "shared/data/wmt/newstest2019.de-fr.src.de").read_text(encoding="utf-8").splitlines()[: args.n]
    with tempfile.TemporaryDirectory() as tmp:
        if args.model is None:
            from tiny_m2m import build_tiny_m2m

            model = build_tiny_m2m(Path(tmp) / "tiny")
        else:
            model = args.model
        settings = dict(model=str(model), target_lang="en", beam_size=1, batch_size=16, max_new_tokens=64)
        converted = pivot.convert_to_ctranslate2(str(model), Path(tmp) / "ct2", "int8")
        backends = {
            "transformers_fp32": pivot.TransformersTranslator(pivot.TranslatorSpec("transformers", **settings), "cpu"),
            "ctranslate2_int8": pivot.CTranslate2Translator(
                pivot.TranslatorSpec("ctranslate2", compute_type="int8", **settings), "cpu", converted
            ),
        }
        speeds = {}
        for name, translator in backends.items():
            translator.translate(texts[:16], "de")  # warm-up
            start = time.perf_counter()
            translator.translate(texts, "de")
            speeds[name] = len(texts) / (time.perf_counter() - start)
    result = {"model": "tiny random M2M100" if args.model is None else str(args.model), "n": len(texts),
              "sentences_per_s": speeds, "ratio_ct2_over_transformers": speeds["ctranslate2_int8"] / speeds["transformers_fp32"]}
    log.info("transformers fp32 %.1f sent/s, ctranslate2 int8 %.1f sent/s, ratio %.2f",
             speeds["transformers_fp32"], speeds["ctranslate2_int8"], result["ratio_ct2_over_transformers"])
    write_figures(args.out, result)


if __name__ == "__main__":
    main()
