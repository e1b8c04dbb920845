"""Stage embed (rules/embed.smk): models rebuilt from PyPI, backends and their one-time exports, keyed vectors."""
