"""Stage score (rules/score.smk): per-item cosines and the strict Precision@1."""
