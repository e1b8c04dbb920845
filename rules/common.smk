# What the rules of every stage share, built from the validated config: the configured views, datasets and models,
# code identities and threads, dataset settings, checksum sentinels of local folders and the final targets. Each
# stage's own inputs and params are plain functions of the config in its subpackage, clsd.<stage>.jobs, which its
# rules file calls. Paths come from clsd.core.paths; aggregation rules take keyed inputs (clsd.core.paths.input_name
# / keyed), never lists zipped by position; params hold only what a job's result depends on: never a path on this
# machine, never a display setting of another rule.
import os
import re
from pathlib import Path

from clsd.config import local_folders
from clsd.translate.jobs import effective_views
from clsd.core import paths
from clsd.core.api_keys import check_api_keys
from clsd.core.code import code_identity
from clsd.core.paths import fill
from clsd.core.sentinel import planned_checksum, save_stat_cache
from clsd.core.stopping import pass_to_jobs as pass_stop_signals_to_jobs
from clsd.serving.model_store import RECIPES

VIEWS = effective_views(config)
if "pivot" in config["views"] and "pivot" not in VIEWS:
    logger.warning("pivot view skipped: pivot.backend is none")
DATASETS = list(config["datasets"])
MODELS = list(config["models"])


def alternatives(names):
    """A wildcard regex matching exactly the given names (and nothing when there are none)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def code(script):
    """The code identity of a rule's script: it and every clsd module it imports (clsd.core.code), so a fix in a
    module reruns exactly the rules that use it."""
    return code_identity(str(Path(workflow.basedir) / "workflow" / "scripts" / script))


def threads(rule):
    """Threads of a heavy rule (config `resources.threads`)."""
    return config["resources"]["threads"][rule]


def dataset_languages(wildcards):
    return config["datasets"][wildcards.dataset]["languages"]


def dataset_directions(wildcards):
    return config["datasets"][wildcards.dataset]["directions"]


# ---- local folders: checksum sentinels written by the folder_checksums job (rules/data.smk) ---------------------


def folder_sentinel(kind, name):
    return paths.SENTINEL.format(kind=kind, name=name)


# Checksums of local folders, computed while planning (reading only); a real run saves their stat caches.
PLANNED_FOLDERS = {
    key: planned_checksum(folder, folder_sentinel(*key))
    for key, folder in local_folders(config).items()
}


def planned_sentinel(kind, name):
    return [folder_sentinel(kind, name)] if (kind, name) in PLANNED_FOLDERS else []


onstart:
    # Before any job: the API keys of the jobs that will send (clsd.core.api_keys); SIGINT, SIGTERM or SIGHUP to Snakemake
    # alone stops the running jobs as Ctrl-C does (clsd.core.stopping).
    check_api_keys(
        config,
        [
            (job.rule.name, job.wildcards_dict)
            for job in workflow.dag.needrun_jobs()
        ],
        os.environ,
    )
    pass_stop_signals_to_jobs()
    for key, (_, stat_cache) in PLANNED_FOLDERS.items():
        save_stat_cache(folder_sentinel(*key), stat_cache)


# ---- targets: what `rule all` asks for ---------------------------------------------------------------------------


def tables(*names, ext=("md", "tex", "csv")):
    return expand(paths.TABLE, name=names, ext=ext)


def analysis_targets():
    """Tables and figures of the analysis stage (none when analysis.enabled is false)."""
    if not config["analysis"]["enabled"]:
        return []
    targets = tables("table3", "correlations", "distractor_stats") + tables(
        "table5", ext=("md", "tex")
    )
    targets += expand(paths.FIGURE, name=["x_change", "m_change"], ext=["pdf", "png"])
    if "pivot" in VIEWS:
        targets += tables("pivot_failures", ext=("md", "csv"))
    return targets


def final_targets():
    targets = tables("table2", "closeness_profile") + tables(
        "validation", ext=("md", "csv")
    )
    targets += expand(paths.MTEB_RECORD, model=MODELS, dataset=DATASETS)
    targets += expand(paths.HF_EXPORT, dataset=DATASETS)
    if config["generator_check"]:
        targets += tables("generator_check", ext=("md", "csv"))
    if config["mteb"]["evaluate"]:
        targets += expand(paths.MTEB_EVALUATE, model=MODELS, dataset=DATASETS)
    return targets + analysis_targets()


def annotation_targets():
    """Pages and sheets of every dataset and language while annotation.sample > 0; the table with verdict files."""
    annotation = config["annotation"]
    if not annotation["sample"]:
        return []
    targets = [
        template.format(dataset=d, lang=lang)
        for d in DATASETS
        for lang in config["datasets"][d]["languages"]
        for template in (paths.ANNOTATION_PAGE, paths.ANNOTATION_SHEET)
    ]
    if annotation["files"]:
        targets += tables("annotation", ext=("md", "csv"))
    return targets
