"""The layout of the product's data folder that the engine writes into (``MEDBOT_DATA_DIR``).

The engine is handed the folder by the composition root; this module only names its subfolders, so the files
the engine writes once and then loads (the embedding GGUF, the fitted triage model) are found in one place.
It imports nothing of ours: the triage check depends on it and must not depend on the embedding code.
"""

from __future__ import annotations

from pathlib import Path


def models_folder(data_dir: Path) -> Path:
    """The subfolder for the model files the product writes once and then loads: the embedding GGUF
    (``engine.embedding.ensure_gguf``) and the fitted triage model (``engine.triage.model.cache_path``)."""
    return Path(data_dir) / "models"
