"""Rule `hf_export`: a dataset's candidate tables as a Hugging Face datasets folder with its card (clsd.report.hf_export)."""

from clsd.core import logs
from clsd.core.io import read_meta, read_table
from clsd.core.paths import keyed
from clsd.report.hf_export import ViewTable, export

logs.to_file(snakemake.log[0])
views = [ViewTable(view, read_table(path), read_meta(path)) for (view,), path in keyed(snakemake.input, "candidates").items()]
export(
    snakemake.output[0],
    sorted(views, key=lambda entry: entry.view != "direct"),
    snakemake.params.directions,
    dataset=snakemake.wildcards.dataset,
    label=snakemake.params.card["label"],
    license_id=snakemake.params.card["license"],
    source=snakemake.params.card["source"],
)
