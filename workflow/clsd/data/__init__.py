"""Stage data (rules/data.smk): corpora and published files → parallel pairs, language checks, candidate tables."""
