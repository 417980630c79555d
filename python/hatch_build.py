"""Build hook: puts the shufflenode sidecar binary into the wheel.

The binary is taken from $SHUFFLENODE_BIN when it names a file, else built
with `go build ./cmd/shufflenode` in the repository root (the parent of this
directory), which needs Go 1.26 or later on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

REL_BIN = "shufflenode/bin/shufflenode"


class SidecarBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Builds or copies the sidecar binary into src/shufflenode/bin."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        dest = Path(self.root) / "src" / REL_BIN
        dest.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("SHUFFLENODE_BIN", "")
        if prebuilt and Path(prebuilt).is_file():
            shutil.copy2(prebuilt, dest)
        else:
            go_build(Path(self.root).parent, dest)
        build_data["force_include"][str(dest)] = REL_BIN
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


def go_build(repo: Path, dest: Path) -> None:
    """Runs `go build` of the sidecar in repo, writing it to dest."""
    if not (repo / "go.mod").is_file():
        raise RuntimeError(
            f"shufflenode: no go.mod in {repo}: build from the repository's python/ "
            "directory, or set SHUFFLENODE_BIN to a prebuilt shufflenode binary"
        )
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        raise RuntimeError(
            "shufflenode: building the sidecar needs Go 1.26+ on PATH "
            "(https://go.dev/dl), or SHUFFLENODE_BIN naming a prebuilt binary"
        )
    subprocess.run([go, "build", "-o", str(dest), "./cmd/shufflenode"], cwd=repo, check=True)
