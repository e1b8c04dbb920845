# Stage data (clsd.data): corpora and published files → parallel pairs → (distractor sets) → the candidate table of
# the direct view; checksum sentinels of local folders.


def parallel_inputs(wildcards):
    """The local files a dataset's pairs are read from, named by what they are (`file|de`, `csv`)."""
    spec = dataset_spec(wildcards)
    source = spec["source"]
    if source["kind"] == "files":
        return {
            input_name("file", lang): source["files"][lang]
            for lang in spec["languages"]
        }
    reference = source_reference(spec)
    return {"csv": reference["path"]} if is_local(reference) else {}


def parallel_params(wildcards):
    """What the pairs depend on besides their files: the source kind and ids, URL and pins, selection, languages."""
    spec = dataset_spec(wildcards)
    source = {
        key: value
        for key, value in spec["source"].items()
        if key not in ("path", "files")
    }
    return {
        "source": source | {"reference": reference_params(source_reference(spec))},
        "select": spec["select"],
        "languages": spec["languages"],
    }


def published_distractors_input(wildcards):
    reference = published_distractors(wildcards)
    return {"csv": reference["path"]} if is_local(reference) else {}


def published_distractors_params(wildcards):
    spec = dataset_spec(wildcards)
    return {
        "csv": reference_params(published_distractors(wildcards)),
        "kind": spec["distractors"]["kind"],
        "generator": spec["distractors"]["generator"],
        "languages": spec["languages"],
    }


def validated_sets(wildcards):
    """A dataset's validated distractor sets, one per language."""
    return [
        paths.VALIDATED.format(dataset=wildcards.dataset, lang=lang)
        for lang in dataset_languages(wildcards)
    ]


def folder_checksum(wildcards):
    """What the folder_checksums job writes, as a checksum: the job reruns only when a file's content changed."""
    return PLANNED_FOLDERS[(wildcards.kind, wildcards.name)][0]


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
        distractors=validated_sets,
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
