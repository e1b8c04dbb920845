"""Distractor generators: an LLM behind any OpenAI-compatible endpoint, and a rule-based baseline."""
