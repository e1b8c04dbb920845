# Stage data (clsd.data): corpora and published files → parallel pairs → (distractor sets) → the candidate table of
# the direct view; checksum sentinels of local folders.


rule parallel:
    input:
        unpack(parallel_inputs),
    output:
        paths.PARALLEL,
    log:
        "results/logs/parallel/{dataset}.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        dataset=parallel_params,
        code=code("parallel.py"),
    script:
        "../workflow/scripts/parallel.py"


rule distractors:
    input:
        unpack(published_distractors_input),
        parallel=paths.PARALLEL,
    output:
        paths.DISTRACTORS,
    log:
        "results/logs/distractors/{dataset}/{lang}.log",
    wildcard_constraints:
        dataset=alternatives(
            datasets_with_distractors(("from_source", "published_csv"))
        ),
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        origin=published_distractors_params,
        code=code("distractors.py"),
    script:
        "../workflow/scripts/distractors.py"


rule candidates:
    input:
        parallel=paths.PARALLEL,
        distractors=scored_sets,
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
        checksum=folder_checksum,
        code=code("folder_checksums.py"),
    script:
        "../workflow/scripts/folder_checksums.py"
