# Corpora → parallel pairs → distractor sets → the candidate table of the direct view.


rule parallel:
    input:
        parallel_inputs,
    output:
        "results/data/{dataset}/parallel.parquet",
    log:
        "results/logs/parallel/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        dataset=parallel_params,
        code=code("parallel.py"),
    script:
        "../workflow/scripts/parallel.py"


rule distractors:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        csv=published_distractors_input,
    output:
        "results/distractors/{dataset}/{lang}.parquet",
    log:
        "results/logs/distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(published_distractor_datasets()),
    conda:
        "../envs/data.yaml"
    params:
        origin=published_distractors_params,
        code=code("distractors.py"),
    script:
        "../workflow/scripts/distractors.py"


rule candidates:
    input:
        parallel="results/data/{dataset}/parallel.parquet",
        distractors=distractor_files,
    output:
        "results/candidates/{dataset}/direct.parquet",
    log:
        "results/logs/candidates/{dataset}.log",
    conda:
        "../envs/data.yaml"
    params:
        languages=dataset_languages,
        code=code("candidates.py"),
    script:
        "../workflow/scripts/candidates.py"


rule folder_checksums:
    output:
        "results/sources/{kind}/{name}.json",
    log:
        "results/logs/folder_checksums/{kind}/{name}.log",
    wildcard_constraints:
        kind="models|translator|stanza",
    conda:
        "../envs/data.yaml"
    params:
        checksum=folder_checksum,
        code=code("folder_checksums.py"),
    script:
        "../workflow/scripts/folder_checksums.py"
