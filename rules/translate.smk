# English pivot: translate every distinct text once per dataset, then the pivot candidate table.


rule convert_ct2:
    input:
        TRANSLATOR_SENTINEL,
    output:
        directory("results/translators/ct2"),
    log:
        "results/logs/convert_ct2.log",
    conda:
        "../envs/translate.yaml"
    params:
        model=config["pivot"]["model"],
        quantization=config["pivot"]["quantization"],
        code=code("convert_ct2.py"),
    script:
        "../workflow/scripts/convert_ct2.py"


rule translate:
    input:
        texts="results/candidates/{dataset}/direct.parquet",
        converted=converted_model(),
        model=TRANSLATOR_SENTINEL,
        published=pivot_inputs,
    output:
        "results/pivot/{dataset}.parquet",
    log:
        "results/logs/translate/{dataset}.log",
    benchmark:
        "results/benchmarks/translate/{dataset}.tsv"
    conda:
        "../envs/translate.yaml"
    threads: 2
    resources:
        mem_mb=config["pivot"]["mem_mb"],
        runtime=config["pivot"]["runtime"],
        gpu=translation_gpus(),
    params:
        spec=translator_spec(),
        pivot_csv=pivot_csv,
        published=published_distractors,
        languages=dataset_languages,
        code=code("translate.py"),
    script:
        "../workflow/scripts/translate.py"


rule pivot_candidates:
    input:
        texts="results/candidates/{dataset}/direct.parquet",
        translations="results/pivot/{dataset}.parquet",
    output:
        "results/candidates/{dataset}/pivot.parquet",
    log:
        "results/logs/pivot_candidates/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        code=code("pivot_candidates.py"),
    script:
        "../workflow/scripts/pivot_candidates.py"
