"""clsd: Cross-Lingual Semantic Discrimination benchmarks (arXiv 2502.08638) as reusable functions.

Every Snakemake rule of the workflow calls into this package; nothing here depends on Snakemake.
"""

__version__ = "0.1.0"
