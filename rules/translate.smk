# Stage translate (clsd.translate): every distinct text of a dataset translated once into the pivot language, then
# the candidate table of the pivot view.
# Inputs and params: clsd.translate.jobs (plain functions of the config, tested without Snakemake).

import clsd.translate.jobs as translate_jobs

TRANSLATOR_SENTINEL = planned_sentinel("translator", "model")


rule convert_ct2:
    input:
        TRANSLATOR_SENTINEL,
    output:
        directory(paths.CT2),
    log:
        "results/logs/convert_ct2.log",
    conda:
        "../envs/translate.yaml"
    params:
        model=translate_jobs.translator_spec(config)["model"],
        quantization=config["pivot"]["quantization"],
        code=code("convert_ct2.py"),
    script:
        "../workflow/scripts/convert_ct2.py"


rule translate:
    input:
        unpack(lambda w: translate_jobs.pivot_inputs(config, w.dataset)),
        texts=fill(paths.CANDIDATES, view="direct"),
        converted=translate_jobs.converted_model(config),
        model=TRANSLATOR_SENTINEL,
    output:
        paths.PIVOT,
    log:
        "results/logs/translate/{dataset}.log",
    benchmark:
        "results/benchmarks/translate/{dataset}.tsv"
    conda:
        "../envs/translate.yaml"
    threads: threads("translate")
    resources:
        mem_mb=config["pivot"]["mem_mb"],
        runtime=config["pivot"]["runtime"],
        gpu=translate_jobs.translation_gpus(config),
    params:
        spec=translate_jobs.translator_spec(config),
        files=lambda w: translate_jobs.pivot_params(config, w.dataset),
        languages=dataset_languages,
        code=code("translate.py"),
    script:
        "../workflow/scripts/translate.py"


rule pivot_candidates:
    input:
        texts=fill(paths.CANDIDATES, view="direct"),
        translations=paths.PIVOT,
    output:
        fill(paths.CANDIDATES, view="pivot"),
    log:
        "results/logs/pivot_candidates/{dataset}.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        code=code("pivot_candidates.py"),
    script:
        "../workflow/scripts/pivot_candidates.py"
