# Stage score (clsd.score): per-item cosines and strict Precision@1 outcomes per model × dataset × view.


rule score:
    input:
        texts=paths.CANDIDATES,
        embeddings=paths.EMBEDDINGS,
    output:
        paths.SCORES,
    log:
        "results/logs/score/{model}/{dataset}/{view}.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        directions=dataset_directions,
        code=code("score.py"),
    script:
        "../workflow/scripts/score.py"
