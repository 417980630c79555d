"""How Client.read_many splits a DoGet of many partitions, packed or not, into
partitions (no server: the batches are made here)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from shufflenode.client import _Cursor, _Many
from shufflenode.errors import ShufflenodeError


def batch(*values: int) -> pa.RecordBatch:
    return pa.record_batch({"v": pa.array(list(values), pa.int64())})


def values(st: _Many, p: int) -> list[int]:
    return [v for b in st.got[p] for v in b.column(0).to_pylist()]


def test_packed_batches_split_at_their_ends() -> None:
    st = _Many([3, 4, 5, 9])
    cur = _Cursor(st, st.parts, "s", "node")
    cur.batch(batch(1, 2, 3), {"ends": [[3, 2]]})        # 3: 1 2; 4 goes on: 3
    cur.batch(batch(4, 5), {"ends": [[4, 1], [5, 1]]})   # 4: 3 4; 5 empty; 9 goes on: 5
    cur.batch(batch(6), None)                            # no end in it
    cur.batch(batch(), {"ends": [[9, 0]]})               # an end only
    assert [values(st, p) for p in st.parts] == [[1, 2], [3, 4], [], [5, 6]]
    assert st.done == {3, 4, 5, 9} and cur.i == 4


def test_unpacked_end_batches_are_read_too() -> None:
    st = _Many([0, 1])
    cur = _Cursor(st, st.parts, "s", "node")
    cur.batch(batch(7, 8), None)
    cur.batch(batch(), {"partition": 0, "end": True})
    cur.batch(batch(), {"partition": 1, "end": True})
    assert values(st, 0) == [7, 8] and values(st, 1) == []
    assert st.done == {0, 1}


def test_a_resumed_partition_skips_the_rows_it_had() -> None:
    st = _Many([2, 6])
    st.add(2, batch(1, 2), 0)                            # read before the stream broke
    cur = _Cursor(st, [2, 6], "s", "node")
    cur.batch(batch(1, 2, 3, 9), {"ends": [[2, 3]]})
    cur.batch(batch(), {"ends": [[6, 0]]})
    assert values(st, 2) == [1, 2, 3] and values(st, 6) == [9]


@pytest.mark.parametrize("md", [
    {"ends": [[0, 1], [1, 5]]},                         # past the batch's rows
    {"ends": [[0, 2], [1, 1]]},                         # rows going back
    {"ends": [[0, 0], [1, 0], [2, 0]]},                 # more ends than partitions
    {"partition": 1, "end": True},                      # another partition's end
])
def test_a_malformed_stream_is_an_error(md: dict) -> None:
    st = _Many([0, 1])
    cur = _Cursor(st, st.parts, "s", "node")
    with pytest.raises(ShufflenodeError):
        cur.batch(batch(1, 2), md)
