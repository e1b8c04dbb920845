# Helpers of rules/annotation.smk (human validation): which sets the candidates take, what a sample depends on,
# the keyed verdict files and the targets. Included before the rule files, since rules/data.smk's candidates
# take scored_sets.

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
    """One name per verdict file: its file name, numbered by position when two share a name (never a path: params
    hold no path on this machine)."""
    names = [Path(f).name for f in files]
    return [n if names.count(n) == 1 else f"{n} ({i + 1})" for i, n in enumerate(names)]


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
