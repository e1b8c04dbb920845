# Stage validate, by people (clsd.validate.annotation): a stratified sample of each validated set to annotate (page
# and sheet), the annotators' verdict files back into a table, and the sets the candidates take (with the verdicts
# recorded, and applied when annotation.apply). Nothing here runs while annotation.sample is 0.


rule annotation_sheet:
    input:
        parallel=paths.PARALLEL,
        distractors=paths.VALIDATED,
    output:
        page=paths.ANNOTATION_PAGE,
        sheet=paths.ANNOTATION_SHEET,
        design=paths.ANNOTATION_DESIGN,
    log:
        "results/logs/annotation_sheet/{dataset}/{lang}.log",
    localrule: True
    # word segmentation (icu4py) for the highlighted differences, the seeded draw (numpy/scipy)
    conda:
        "../envs/analysis.yaml"
    params:
        annotation=annotation_design(),
        source_lang=source_language,
        code=code("annotation_sheet.py"),
    script:
        "../workflow/scripts/annotation_sheet.py"


rule annotated_distractors:
    input:
        unpack(annotation_files),
        distractors=paths.VALIDATED,
        design=paths.ANNOTATION_DESIGN,
    output:
        paths.ANNOTATED,
    log:
        "results/logs/annotated_distractors/{dataset}/{lang}.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        apply=ANNOTATION["apply"],
        annotators=lambda w: annotator_names(ANNOTATION["files"][w.dataset][w.lang]),
        code=code("annotated_distractors.py"),
    script:
        "../workflow/scripts/annotated_distractors.py"


rule annotation_report:
    input:
        unpack(annotation_report_inputs),
    output:
        md=report(
            fill(paths.TABLE, name="annotation", ext="md"),
            caption="../report/annotation.rst",
            category="Validation",
        ),
        csv=fill(paths.TABLE, name="annotation", ext="csv"),
    log:
        "results/logs/annotation_report.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        annotators={
            d: {lang: annotator_names(files) for lang, files in by_lang.items()}
            for d, by_lang in ANNOTATION["files"].items()
        },
        code=code("annotation_report.py"),
    script:
        "../workflow/scripts/annotation_report.py"
