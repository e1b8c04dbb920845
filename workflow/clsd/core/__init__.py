"""What every stage shares: languages and directions, errors, I/O with provenance, logging, code identity."""
