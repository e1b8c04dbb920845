# Corpora → parallel pairs → distractor sets → the candidate table of the direct view.


rule parallel:
    output:
        "results/data/{dataset}/parallel.parquet",
    params:
        spec=dataset_spec,
        download_cache=config["download_cache"],
    log:
        "results/logs/parallel/{dataset}.log",
    script:
        "../workflow/scripts/parallel.py"


rule distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
    output:
        "results/distractors/{dataset}/{lang}.parquet",
    params:
        spec=dataset_spec,
        download_cache=config["download_cache"],
    log:
        "results/logs/distractors/{dataset}/{lang}.log",
    script:
        "../workflow/scripts/distractors.py"


rule candidates:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        distractors=distractor_files,
    output:
        "results/candidates/{dataset}/direct.parquet",
    params:
        languages=dataset_languages,
    log:
        "results/logs/candidates/{dataset}.log",
    script:
        "../workflow/scripts/candidates.py"
