"""shufflenode: run Dask, xarray and pandas shuffles and rechunks through shufflenode sidecars.

``Client`` speaks the Flight API; ``LocalSidecars`` starts local ``serve`` processes;
``shufflenode.dask`` holds shuffle, merge, set_index and rechunk of Dask collections;
``from_partitioned`` and ``PartitionedArray`` speak the ``__partitioned__`` protocol.
"""

from ._puttasks import TaskOutcome, TaskPut
from .client import Auth, Client, Endpoint, TaskRunner
from .errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ShufflenodeError,
    Unauthenticated,
    Unavailable,
)
from .partitioned import (
    LocalArray,
    PartitionedArray,
    from_distarray,
    from_partitioned,
    rechunk_array,
)
from .sidecar import LocalSidecars, Sidecar, binary

__all__ = [
    "AlreadyExists", "Auth", "Client", "Endpoint", "FailedPrecondition", "InvalidArgument",
    "LocalSidecars", "NotFound", "ShufflenodeError", "Sidecar", "TaskOutcome", "TaskPut",
    "TaskRunner", "Unauthenticated", "Unavailable", "binary", "LocalArray", "PartitionedArray",
    "from_distarray", "from_partitioned", "rechunk_array",
]
__version__ = "0.1.0"
