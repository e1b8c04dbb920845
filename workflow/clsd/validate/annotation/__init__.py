"""Human validation of distractors, round trip: a stratified sample to annotate (page and sheet), the annotators'
verdict files read back and checked, weighted estimates and agreement, and the verdicts applied to the sets."""
