#!/usr/bin/env python3
"""Writes the golden stores of golden_test.go from hand-computable bytes.

Independent of the Go code: Python's struct and zlib modules and the zstd
command-line tool. The array is 3x4 int32, a[i][j] = 4*i + j + 1, chunks 2x3,
fill_value 42, so the grid is 2x2 and the edge chunks are padded with 42:

    0.0 = [[1, 2, 3], [5, 6, 7]]      0.1 = [[4, 42, 42], [8, 42, 42]]
    1.0 = [[9, 10, 11], [42, 42, 42]] 1.1 = [[12, 42, 42], [42, 42, 42]]

i4_none.zarr   "<i4", no compressor, "." separator, all four chunks.
i4_zlib.zarr   "<i4", zlib level 1, "." separator, chunk 1.1 missing.
i4_zstd.zarr   ">i4", zstd level 1, "/" separator, all four chunks.

Run from zarr/testdata: python3 make_golden.py
"""
import os, shutil, struct, subprocess, tempfile, zlib

F = 42
CHUNKS = {
    (0, 0): [1, 2, 3, 5, 6, 7],
    (0, 1): [4, F, F, 8, F, F],
    (1, 0): [9, 10, 11, F, F, F],
    (1, 1): [12, F, F, F, F, F],
}
ZARRAY = """{
    "chunks": [
        2,
        3
    ],
    "compressor": %s,
    "dimension_separator": "%s",
    "dtype": "%s",
    "fill_value": 42,
    "filters": null,
    "order": "C",
    "shape": [
        3,
        4
    ],
    "zarr_format": 2
}
"""


def zstd(raw):
    with tempfile.NamedTemporaryFile() as f:
        f.write(raw)
        f.flush()
        return subprocess.run(["zstd", "-1", "-q", "-c", f.name], check=True, capture_output=True).stdout


def store(name, order, comp, sep, encode, skip=()):
    shutil.rmtree(name, ignore_errors=True)
    os.mkdir(name)
    with open(os.path.join(name, ".zarray"), "w") as f:
        f.write(ZARRAY % (comp, sep, order + "i4"))
    for (i, j), vals in CHUNKS.items():
        if (i, j) in skip:
            continue
        path = os.path.join(name, *f"{i}{sep}{j}".split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(encode(struct.pack(order + "6i", *vals)))


store("i4_none.zarr", "<", "null", ".", lambda b: b)
store("i4_zlib.zarr", "<", '{\n        "id": "zlib",\n        "level": 1\n    }', ".",
      lambda b: zlib.compress(b, 1), skip=[(1, 1)])
store("i4_zstd.zarr", ">", '{\n        "id": "zstd",\n        "level": 1\n    }', "/", zstd)
