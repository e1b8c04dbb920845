"""Stage analysis (rules/analysis.smk): why models fail — Table 3, single-word pairs and their POS, normalised
shifts and their figures, correlations, examples and distractor statistics."""
