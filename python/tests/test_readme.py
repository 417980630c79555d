"""README's Python example runs as written and prints what its comment says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    """The first python block of README's Python section."""
    text = README.read_text()
    m = re.search(r"### Python.*?```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python example under its Python section"
    return m.group(1)


def test_readme_example(tmp_path: Path) -> None:
    code = readme_example()
    want = re.search(r"#\s*(\(.*\))\s*$", code.strip())
    assert want, "the example's last line should say what it prints"
    script = tmp_path / "example.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == want.group(1)
