"""Files in and out: bounded, checked reading, and atomic writing that never leaves half an output.

- :mod:`.reading`: text, YAML and JSON read with size, depth and alias limits and clean errors;
- :mod:`.atomic`: outputs written through a temporary sibling and renamed, stale staging cleaned up;
- :mod:`.redact`: credentials removed from everything the workbench writes.
"""

from workbench.io.atomic import (
    atomic_dir,
    atomic_file,
    check_output,
    clean_staging,
    staged_sibling,
    write_json_atomic,
)
from workbench.io.reading import load_json, load_yaml, read_document, read_text
from workbench.io.redact import redact

__all__ = [
    "atomic_dir",
    "atomic_file",
    "check_output",
    "clean_staging",
    "load_json",
    "load_yaml",
    "read_document",
    "read_text",
    "redact",
    "staged_sibling",
    "write_json_atomic",
]
