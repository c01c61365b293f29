"""The embeddings extra: a static embedding model shipped inside a wheel.

``pip install 'ctxproxy[embeddings]'`` brings ``wordllama``, whose wheel
carries the ``l2_supercat`` model (a 32,000 × 256 token-embedding matrix
in safetensors, 16 MB, and its tokenizer). A text's vector is the mean of
its tokens' rows, L2-normalised — what wordllama's own ``embed`` computes,
without its padding.

Loaded offline, always: the two files are read from the installed
package's directory. wordllama's ``WordLlama.load`` is not used — in 0.4.0
it looks for the bundled tokenizer under ``tokenizer/`` while the wheel
ships ``tokenizers/``, and falls back to downloading it from the Hugging
Face hub; nor is ``wordllama`` imported (its ``__init__`` calls
``logging.basicConfig``). Nothing in this module opens a socket.

The base install never imports this module's dependencies: ``available()``
only asks importlib whether they are installed.
"""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Sequence

MODEL = "l2_supercat"
WEIGHTS = f"weights/{MODEL}_256.safetensors"
TOKENIZER = f"tokenizers/{MODEL}_tokenizer_config.json"
INSTALL_HINT = "install the extra: pip install 'ctxproxy[embeddings]'"


class EmbeddingsUnavailable(RuntimeError):
    """The extra is not installed (or its model files are missing)."""


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("wordllama")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def missing() -> str:
    """Why the extra cannot be used ("" when it can)."""
    for module in ("numpy", "tokenizers", "safetensors"):
        if importlib.util.find_spec(module) is None:
            return f"the embeddings extra is not installed (no {module}); {INSTALL_HINT}"
    root = _package_dir()
    if root is None:
        return f"the embeddings extra is not installed (no wordllama); {INSTALL_HINT}"
    for rel in (WEIGHTS, TOKENIZER):
        if not (root / rel).is_file():
            return f"wordllama at {root} does not ship {rel}; {INSTALL_HINT} (wordllama>=0.4)"
    return ""


def available() -> bool:
    return not missing()


class Embedder:
    """Text → unit float32 vectors with the bundled wordllama model."""

    def __init__(self, dim: int = 256):
        problem = missing()
        if problem:
            raise EmbeddingsUnavailable(problem)
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        root = _package_dir()
        assert root is not None
        self._np = np
        self._tok = Tokenizer.from_file(str(root / TOKENIZER))
        self._tok.no_padding()
        self._tok.no_truncation()
        with safe_open(str(root / WEIGHTS), framework="np") as f:
            weights = f.get_tensor("embedding.weight")
        if not 1 <= dim <= weights.shape[1]:
            raise ValueError(f"dim: expected 1..{weights.shape[1]}")
        self.dim = dim
        self._weights = np.ascontiguousarray(weights[:, :dim], dtype=np.float32)  # Matryoshka: a prefix
        self.name = f"wordllama:{MODEL}:{dim}"

    def embed(self, texts: Sequence[str]) -> Any:
        """A (len(texts), dim) float32 array of unit rows (zero for a text with no token)."""
        np = self._np
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # One text (a query): encode() — encode_batch hands work to a thread pool, dearer than one text.
        encs = ([self._tok.encode(texts[0], add_special_tokens=False)] if len(texts) == 1
                else self._tok.encode_batch(list(texts), add_special_tokens=False))
        for i, enc in enumerate(encs):
            if enc.ids:
                out[i] = self._weights[enc.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out /= norms
        return out


_shared: dict[int, Embedder] = {}
_lock = threading.Lock()


def shared_embedder(dim: int = 256) -> Embedder:
    """One model per process (16 MB, loaded in about a second)."""
    with _lock:
        e = _shared.get(dim)
        if e is None:
            e = _shared[dim] = Embedder(dim)
        return e
