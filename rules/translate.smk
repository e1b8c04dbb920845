# Stage translate (clsd.translate): every distinct text of a dataset translated once into the pivot language, then
# the candidate table of the pivot view.

from clsd.translate.pivot import TranslatorSpec


def converted_model():
    """The CTranslate2 conversion, when that backend is configured."""
    return [paths.CT2] if config["pivot"]["backend"] == "ctranslate2" else []


def translator_spec():
    """What translations depend on (a local model's display name is no part of it: its sentinel is an input)."""
    spec = TranslatorSpec.from_config(config["pivot"]).__dict__
    return spec | {"model": None} if config["pivot"]["source"] == "local" else spec


TRANSLATOR_SENTINEL = planned_sentinel("translator", "model")


def pivot_csv(wildcards):
    return dataset_spec(wildcards).get("pivot_csv")


def pivot_inputs(wildcards):
    """published backend: the English file and the published CSV whose items it must cover."""
    if config["pivot"]["backend"] != "published":
        return {}
    files = {
        "pivot_csv": pivot_csv(wildcards),
        "published": published_distractors(wildcards),
    }
    return {
        name: reference["path"]
        for name, reference in files.items()
        if is_local(reference)
    }


def pivot_params(wildcards):
    if config["pivot"]["backend"] != "published":
        return {}
    return {
        "pivot_csv": reference_params(pivot_csv(wildcards)),
        "published": reference_params(published_distractors(wildcards)),
    }


def translation_gpus():
    """Published translations need no GPU; model backends request the configured number."""
    return 0 if config["pivot"]["backend"] == "published" else config["pivot"]["gpu"]


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
        model=translator_spec()["model"],
        quantization=config["pivot"]["quantization"],
        code=code("convert_ct2.py"),
    script:
        "../workflow/scripts/convert_ct2.py"


rule translate:
    input:
        unpack(pivot_inputs),
        texts=fill(paths.CANDIDATES, view="direct"),
        converted=converted_model(),
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
        gpu=translation_gpus(),
    params:
        spec=translator_spec(),
        files=pivot_params,
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
