"""Stage translate (rules/translate.smk): the pivot view, every text translated once into the pivot language."""
