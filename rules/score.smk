# Per-item cosines and strict Precision@1 outcomes per model × dataset × view (all directions).


rule score:
    input:
        texts="results/candidates/{dataset}/{view}.parquet",
        embeddings="results/embeddings/{model}/{dataset}/{view}.parquet",
    output:
        "results/scores/{model}/{dataset}/{view}.parquet",
    log:
        "results/logs/score/{model}/{dataset}/{view}.log",
    conda:
        "../envs/report.yaml"
    params:
        directions=dataset_directions,
        code=code("score.py"),
    script:
        "../workflow/scripts/score.py"
