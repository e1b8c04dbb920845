"""The public name of clsd's MTEB task: `from clsd.mteb_task import clsd_task`, as every dataset card exported by
clsd.report.hf_export says. The task lives in the report stage, beside the export it reads (clsd.report.mteb_task)."""

from clsd.report.mteb_task import clsd_task

__all__ = ["clsd_task"]
