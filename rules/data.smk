# Stage data (clsd.data): corpora and published files → parallel pairs → (distractor sets) → the candidate table of
# the direct view; checksum sentinels of local folders.
# Inputs and params: clsd.data.jobs (plain functions of the config, tested without Snakemake).

import clsd.data.jobs as data_jobs


rule parallel:
    input:
        unpack(lambda w: data_jobs.parallel_inputs(config, w.dataset)),
    output:
        paths.PARALLEL,
    log:
        "results/logs/parallel/{dataset}.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        dataset=lambda w: data_jobs.parallel_params(config, w.dataset),
        code=code("parallel.py"),
    script:
        "../workflow/scripts/parallel.py"


rule distractors:
    input:
        unpack(lambda w: data_jobs.published_distractors_input(config, w.dataset)),
        parallel=paths.PARALLEL,
    output:
        paths.DISTRACTORS,
    log:
        "results/logs/distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(
            data_jobs.datasets_with_distractors(
                config, ("from_source", "published_csv")
            )
        ),
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        origin=lambda w: data_jobs.published_distractors_params(config, w.dataset),
        code=code("distractors.py"),
    script:
        "../workflow/scripts/distractors.py"


rule candidates:
    input:
        parallel=paths.PARALLEL,
        distractors=lambda w: data_jobs.scored_sets(config, w.dataset),
    output:
        fill(paths.CANDIDATES, view="direct"),
    log:
        "results/logs/candidates/{dataset}.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        languages=dataset_languages,
        code=code("candidates.py"),
    script:
        "../workflow/scripts/candidates.py"


rule folder_checksums:
    output:
        paths.SENTINEL,
    log:
        "results/logs/folder_checksums/{kind}/{name}.log",
    wildcard_constraints:
        kind="models|translator|stanza",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        checksum=lambda w: PLANNED_FOLDERS[(w.kind, w.name)][0],
        code=code("folder_checksums.py"),
    script:
        "../workflow/scripts/folder_checksums.py"
