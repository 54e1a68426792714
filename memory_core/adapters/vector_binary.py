"""Vectors written and read in pgvector's binary format: a bound parameter type for bulk writes of embeddings,
and `sent_vector` for reads of a few rows' vectors that are compared in Python.

pgvector's SQLAlchemy type sends a vector as text, each float through `repr`: 1-2 ms for 512 floats, more
than the rest of a message's SQL. `BinaryVector` sends the same float32 values as pgvector's binary input
(dimension, a reserved word, big-endian float4s) in ~0.05 ms. The parameter goes out with no type of its
own, so PostgreSQL reads it with the column's (vector) binary input: the stored values are the same bits as
through text (a float32 written by `repr` parses back to itself).
"""
from __future__ import annotations

import struct

import numpy as np
import psycopg
from pgvector import Vector
from pgvector.sqlalchemy import Vector as VectorColumn
from psycopg.adapt import Dumper
from psycopg.pq import Format
from sqlalchemy import func
from sqlalchemy.types import LargeBinary, TypeDecorator, UserDefinedType


class VectorBytes:
    """A vector already in pgvector's binary input format."""

    __slots__ = ("data",)

    def __init__(self, values) -> None:
        array = np.asarray(values, dtype=">f4")
        if array.ndim != 1:
            raise ValueError("a vector is one-dimensional")
        self.data = struct.pack(">HH", array.shape[0], 0) + array.tobytes()


class _VectorBytesDumper(Dumper):
    format = Format.BINARY
    oid = 0  # unknown: PostgreSQL takes the type the statement gives the parameter (the vector column's)

    def dump(self, obj: VectorBytes) -> bytes:
        return obj.data


psycopg.adapters.register_dumper(VectorBytes, _VectorBytesDumper)


def _in_binary(value):
    """A bound vector as `VectorBytes` (both types' bind processor)."""
    return None if value is None else VectorBytes(value)


class BinaryVector(UserDefinedType):
    """A bound parameter (`bindparam(..., type_=BinaryVector())`) for a vector column, sent in binary."""

    cache_ok = True

    def get_col_spec(self, **kw) -> str:
        return "vector"

    def bind_processor(self, dialect):
        return _in_binary


class BinaryVectorColumn(VectorColumn):
    """pgvector's column type, whose written values go in binary: a row inserted or updated through the ORM
    (a memory and its vector) sends its float32s as `BinaryVector` does, not as text. Read back, compared
    and rendered as literals exactly as pgvector's type."""

    cache_ok = True

    def bind_processor(self, dialect):
        return _in_binary


class _SentVector(TypeDecorator):
    impl = LargeBinary
    cache_ok = True

    def process_result_value(self, value, dialect):
        # pgvector's own decoder of its binary format: the float32 array its type reads from text.
        return None if value is None else Vector.from_binary(value).to_numpy()


def sent_vector(column):
    """`column` (a vector) read through `vector_send`: 2 KB of bytes for 512 dimensions, where the text form
    costs PostgreSQL twice as long to print and Python ~0.1 ms to parse. Read as pgvector's type reads it."""
    return func.vector_send(column, type_=_SentVector())
