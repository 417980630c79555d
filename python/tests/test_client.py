"""Client.read_many against real serve processes: the same rows as one read per
partition, and partitions that moved after a lost node."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

import shufflenode
from shufflenode.client import Endpoint, TaskRunner, _groups, _many_ticket, fnv32a
from shufflenode.frames import serialize

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.float64()), ("s", pa.string())])


def task_batches(t: int) -> list[pa.RecordBatch]:
    """Input task t: the same rows on every call, in two batches."""
    rng = np.random.default_rng(t)
    n = 300 + 50 * t
    k = rng.integers(0, 5000, n)
    table = pa.table({"k": k, "v": rng.normal(size=n), "s": [f"s{x % 97}" for x in k]},
                     schema=SCHEMA)
    return table.to_batches(max_chunksize=n // 2 + 1)


def spec(sid: str, tasks: int, partitions: int) -> dict:
    return {"id": sid, "kind": "dataframe", "tasks": tasks, "partitions": partitions,
            "schema": serialize(SCHEMA), "rule": {"kind": "hash", "columns": ["k"]}}


def one_by_one(c: shufflenode.Client, sid: str, parts: Sequence[int],
               eps: Sequence[Endpoint]) -> dict[int, pa.Table]:
    return {p: c.read(sid, p, eps[p]) for p in parts}


def test_groups_by_owner_and_ticket_form():
    eps = [Endpoint(p, b"", "a" if p % 3 else "b") for p in range(10)]
    assert _groups([9, 0, 3, 1, 2], eps) == [("b", [0, 3, 9]), ("a", [1, 2])]
    assert _many_ticket([4, 5, 6]) == {"range": [4, 7]}
    assert _many_ticket([4, 6]) == {"partitions": [4, 6]}
    many = [Endpoint(p, b"", "a") for p in range(70000)]
    assert [len(g) for _, g in _groups(range(70000), many)] == [65536, 70000 - 65536]


def test_read_many_equals_reads_of_one(sidecars):
    sid = f"many-{uuid.uuid4().hex[:8]}"
    with sidecars.client() as c:
        eps = c.run(spec(sid, 5, 40), SCHEMA, task_batches)
        want = one_by_one(c, sid, range(40), eps)
        got = c.read_many(sid, range(40))
        assert list(got) == list(range(40))
        assert sum(t.num_rows for t in got.values()) == sum(
            sum(b.num_rows for b in task_batches(t)) for t in range(5))
        for p in range(40):
            assert got[p].equals(want[p]), f"partition {p}"
        empty = [p for p in range(40) if want[p].num_rows == 0]
        some = [33, 2, 17, 2, 0] + empty[:1]
        sub = c.read_many(sid, some, eps)
        assert list(sub) == list(dict.fromkeys(some))
        for p in sub:
            assert sub[p].equals(want[p]) and sub[p].schema == SCHEMA
        assert c.read_many(sid, []) == {}
        c.close(sid)


def test_read_many_of_an_array_shuffle_is_refused(sidecars):
    from shufflenode.arrays import array_schema, array_spec, chunk_batch

    sid = f"many-arr-{uuid.uuid4().hex[:8]}"
    x = np.arange(16.0).reshape(4, 4)
    with sidecars.client() as c:
        c.run(array_spec(sid, x.dtype, ((4,), (4,)), ((2, 2), (4,))), array_schema(x.dtype),
              lambda t: [chunk_batch(x)])
        with pytest.raises(shufflenode.InvalidArgument, match="array"):
            c.read_many(sid, [0, 1])
        c.close(sid)


@pytest.mark.timeout(180)
def test_read_many_follows_partitions_moved_by_a_lost_node():
    sid = f"many-moved-{uuid.uuid4().hex[:8]}"
    with shufflenode.LocalSidecars(3) as sc, sc.client() as c:
        eps = c.run(spec(sid, 6, 30), SCHEMA, task_batches)
        want = c.read_many(sid, range(30), eps)
        home = sc.addrs[fnv32a(sid) % 3]
        victim = next(s for s in sc.sidecars if s.api != home and
                      any(e.addr == s.api for e in eps))
        victim.kill()
        runner = TaskRunner(c, sid, SCHEMA, task_batches, round=1)
        got = c.read_many(sid, range(30), eps, recover=runner.recover, give_up_after=60)
        assert all(e.addr != victim.api for e in c.locations(sid))
        for p in range(30):
            assert got[p].equals(want[p]), f"partition {p}"


def test_a_partition_streamed_again_skips_the_rows_held():
    from shufflenode.client import _Many

    rows = pa.table({"k": pa.array(range(10), pa.int64())})
    st = _Many([4, 7])
    skip = 0
    for b in rows.slice(0, 6).to_batches(max_chunksize=4):  # cut after 6 rows
        skip = st.add(7, b, skip)
    skip = st.rows(7)
    assert skip == 6
    for b in rows.to_batches(max_chunksize=3):  # streamed again, cut elsewhere
        skip = st.add(7, b, skip)
    st.end(7, {"partition": 7, "end": True}, "s", "n")
    with pytest.raises(shufflenode.ShufflenodeError, match="end marker"):
        st.end(4, {"partition": 5, "end": True}, "s", "n")
    assert st.todo() == [4]
    st.schema = rows.schema
    assert st.tables()[7].equals(rows)
