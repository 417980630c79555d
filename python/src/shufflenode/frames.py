"""pandas <-> Arrow for dataframe shuffles: schemas from Dask meta, batches, and back."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .errors import InvalidArgument

INDEX_COL = "__shufflenode_index__"


def schema_of(meta: pd.DataFrame, keep_index: bool) -> pa.Schema:
    """The Arrow schema of a frame like meta (object columns of no known type: large_string)."""
    frame = meta.reset_index(names=INDEX_COL) if keep_index else meta.reset_index(drop=True)
    schema = pa.Schema.from_pandas(frame, preserve_index=False).remove_metadata()
    fields = [f.with_type(pa.large_string()) if pa.types.is_null(f.type) else f for f in schema]
    return pa.schema(fields)


def serialize(schema: pa.Schema) -> str:
    """base64 of the encapsulated IPC message of schema (the create spec's form)."""
    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def to_batches(df: pd.DataFrame, schema: pa.Schema, keep_index: bool,
               shuffle: str = "") -> list[pa.RecordBatch]:
    """The record batches of df in schema."""
    frame = df.reset_index(names=INDEX_COL) if keep_index else df.reset_index(drop=True)
    try:
        table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InvalidArgument(f"partition does not fit the schema: {e}", shuffle=shuffle) from e
    return table.to_batches(max_chunksize=1 << 16)


def to_frame(table: pa.Table, meta: pd.DataFrame, keep_index: bool) -> pd.DataFrame:
    """The pandas frame of table, with meta's index and column dtypes."""
    df = table.to_pandas()
    if keep_index:
        df = df.set_index(INDEX_COL)
        df.index = df.index.astype(meta.index.dtype)
        df.index.name = meta.index.name
    return conform(df, meta)


def conform(df: pd.DataFrame, meta: pd.DataFrame) -> pd.DataFrame:
    """df with meta's column order and dtypes."""
    df = df[list(meta.columns)]
    casts = {c: t for c, t in meta.dtypes.items() if df[c].dtype != t}
    return df.astype(casts) if casts else df


def division_value(v: Any, typ: pa.DataType) -> Any:
    """A Dask division as the JSON value of a range rule for a column of type typ."""
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ) or pa.types.is_duration(typ):
        return pa.scalar(pd.Timestamp(v) if pa.types.is_timestamp(typ) else v, type=typ).value
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, np.floating):
        return float(v)
    return v


def key_family(typ: pa.DataType) -> str:
    """Key types that hash alike share a family (docs/flight-api.md, the hash rule)."""
    if pa.types.is_integer(typ):
        return "int"
    if pa.types.is_floating(typ):
        return "float"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "string"
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return "string"
    return str(typ)
