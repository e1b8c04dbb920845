"""Stage report (rules/report.smk): Table 2 with its intervals and figure, MTEB records, Hugging Face exports."""
