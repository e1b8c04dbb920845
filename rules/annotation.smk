# Stage validate, by people (clsd.validate.annotation): a stratified sample of each validated set to annotate (page
# and sheet), the annotators' verdict files back into a table, and the sets the candidates take (with the verdicts
# recorded, and applied when annotation.apply). Nothing here runs while annotation.sample is 0.

ANNOTATION = config["annotation"]


def annotated(dataset, lang):
    """Whether annotators' verdict files are configured for a dataset's language."""
    return bool(ANNOTATION["files"].get(dataset, {}).get(lang))


def scored_sets(wildcards):
    """The distractor sets the candidates take, one per language: the validated set, or with verdict files the
    annotated one (the verdicts recorded for the card, and applied when annotation.apply).
    """
    return [
        (
            paths.ANNOTATED if annotated(wildcards.dataset, lang) else paths.VALIDATED
        ).format(dataset=wildcards.dataset, lang=lang)
        for lang in dataset_languages(wildcards)
    ]


def source_language(wildcards):
    """The language shown as the source beside a target language: the source of the first configured direction
    into it, else the dataset's first other language."""
    into = [
        d.split("-")[0]
        for d in dataset_directions(wildcards)
        if d.split("-")[1] == wildcards.lang
    ]
    others = [l for l in dataset_languages(wildcards) if l != wildcards.lang]
    return (into or others)[0]


def annotation_design():
    """What a sample depends on (the verdict files and apply do not change it)."""
    return {
        key: ANNOTATION[key]
        for key in ("sample", "seed", "stratify", "min_per_stratum")
    }


def annotator_names(files):
    """One name per verdict file: its file name (its path when two share a name)."""
    names = [Path(f).name for f in files]
    return [n if names.count(n) == 1 else f for n, f in zip(names, files)]


def annotation_files(wildcards):
    return {
        input_name("verdicts", str(i)): f
        for i, f in enumerate(ANNOTATION["files"][wildcards.dataset][wildcards.lang])
    }


def annotation_report_inputs(wildcards):
    inputs = {}
    for d, by_lang in ANNOTATION["files"].items():
        for lang, files in by_lang.items():
            inputs[input_name("design", d, lang)] = paths.ANNOTATION_DESIGN.format(
                dataset=d, lang=lang
            )
            for i, f in enumerate(files):
                inputs[input_name("verdicts", d, lang, str(i))] = f
    return inputs


def annotation_targets():
    """Pages and sheets of every dataset and language while annotation.sample > 0; the table with verdict files."""
    if not ANNOTATION["sample"]:
        return []
    targets = [
        template.format(dataset=d, lang=lang)
        for d in DATASETS
        for lang in config["datasets"][d]["languages"]
        for template in (paths.ANNOTATION_PAGE, paths.ANNOTATION_SHEET)
    ]
    if ANNOTATION["files"]:
        targets += tables("annotation", ext=("md", "csv"))
    return targets


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
    conda:
        "../envs/report.yaml"
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
