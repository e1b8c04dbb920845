"""Rule `shifts`: normalised cross- and monolingual shifts of one model's single-word pairs (N over every
parallel pair of the datasets, whose originals the direct view's embedding job also encodes). A dataset without
any item to score was not embedded and takes no part."""

import logging

import polars as pl
from clsd.analysis import shifts
from clsd.core import logs
from clsd.core.io import read_meta, read_table, write_table
from clsd.core.paths import keyed

logs.to_file(snakemake.log[0])
seed = snakemake.params.seed
files = {kind: keyed(snakemake.input, kind) for kind in ("embeddings", "candidates", "pairs", "parallel")}
data = []
for (dataset,), emb_path in files["embeddings"].items():
    embeddings = read_table(emb_path)
    if embeddings.height == 0:
        logging.warning("%s: no item to score, not embedded: left out of the shifts and of N", dataset)
        continue
    data.append((dataset, snakemake.params.languages[dataset], embeddings, read_table(files["candidates"][(dataset,)]),
                 read_table(files["pairs"][(dataset,)]), read_meta(emb_path)["model"]["row_key_prefix"],
                 read_table(files["parallel"][(dataset,)])))
if not data:
    logging.warning("no dataset has an item to score: no shifts")
    write_table(shifts.empty_shifts(), snakemake.output[0], {"normaliser": None, "seed": seed, "model": snakemake.wildcards.model})
else:
    pairs = [shifts.pair_cosines(par, e, p, langs, seed) for _, langs, e, _, _, p, par in data]
    norm = shifts.normaliser([a for a, _ in pairs], [b for _, b in pairs])
    norm["parallel_pairs"] = sum(len(a) for a, _ in pairs)
    logging.info("N = %.4f (parallel %.4f, unrelated %.4f, %d pairs)", norm["N"], norm["parallel_mean"], norm["unrelated_mean"],
                 norm["parallel_pairs"])
    frames = [
        shifts.pair_shifts(p, c, e, prefix, langs, norm["N"]).with_columns(pl.lit(dataset).alias("dataset"))
        for dataset, langs, e, c, p, prefix, _ in data
    ]
    result = pl.concat(frames).with_columns(pl.lit(snakemake.params.label).alias("model"))
    write_table(result, snakemake.output[0], {"normaliser": norm, "seed": seed, "model": snakemake.wildcards.model})
