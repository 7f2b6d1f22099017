"""The CDI spec directory: atomic writes and removals of spec files.

Why this module exists: a runtime may read the CDI directory at any moment,
so a spec file must appear whole or not at all (write to a temporary file,
fsync, rename), and a driver must be able to list its own transient claim
specs to remove those no checkpoint entry accounts for after a crash.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from services.driver import cdi


class CdiDirectory:
    """The CDI spec files one driver owns under ``root``."""

    def __init__(self, root: Path, *, driver: str) -> None:
        self.root = root
        self.driver = driver

    def ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def path_for(self, claim_uid: str) -> Path:
        return self.root / cdi.claim_spec_file(self.driver, claim_uid)

    def write(self, file_name: str, spec: dict[str, Any]) -> Path:
        """Write ``spec`` atomically as ``file_name``."""
        self.ensure()
        path = self.root / file_name
        tmp = path.with_name(f".{path.name}.tmp")
        data = cdi.render(spec).encode()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return path

    def write_claim(self, claim_uid: str, spec: dict[str, Any]) -> Path:
        return self.write(cdi.claim_spec_file(self.driver, claim_uid), spec)

    def write_common(self, spec: dict[str, Any]) -> Path:
        return self.write(cdi.common_spec_file(self.driver), spec)

    def remove_claim(self, claim_uid: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path_for(claim_uid).unlink()

    def claim_uids(self) -> list[str]:
        """UIDs of the claims that have a transient spec file here (the common spec excluded)."""
        prefix = cdi.transient_spec_name(self.driver, "")[: -len(cdi.SPEC_EXTENSION)]
        common = cdi.common_spec_file(self.driver)
        if not self.root.is_dir():
            return []
        uids = []
        for path in sorted(self.root.iterdir()):
            name = path.name
            if name == common or not name.startswith(prefix) or not name.endswith(cdi.SPEC_EXTENSION):
                continue
            uids.append(name[len(prefix) : -len(cdi.SPEC_EXTENSION)])
        return uids
