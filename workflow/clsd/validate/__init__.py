"""Stage validate (rules/validate.smk): which distractors cannot differ in meaning from their target, the optional
LLM judge, and the validation report."""
