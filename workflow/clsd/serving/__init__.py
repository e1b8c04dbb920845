"""What every stage that talks to a model stands on, below the stages: the OpenAI-compatible HTTP client, llama.cpp's
llama-server (its build from the pinned sdist, its CPU variants, the process that serves a GGUF), the model store
(models rebuilt from PyPI wheels, and where every model folder lives) and the SQLite base of the response and
vector stores. Generation and embedding both use it; neither imports the other."""
